// The local Hetzner Cloud stub's firewalls: create (with rules and apply_to), set_rules replacing
// every rule, apply_to_resources; the API's limits on rules (at most 50, ports only for tcp and udp).
import type { Action, Firewall, FirewallRule, Labels } from './hetzner-types.js'
import { apiError, invalidInput, type StubResponse, uniquenessError } from './stub-errors.js'

/** What the firewall routes need of the stub: its firewalls, fresh IDs and actions. */
export interface FirewallContext {
  firewalls: Map<number, Firewall>
  newId(): number
  action(command: string, resources: { id: number; type: string }[]): Action
}

export function createFirewall(ctx: FirewallContext, input: unknown): StubResponse {
  const body = (input ?? {}) as Record<string, unknown>
  if (typeof body.name !== 'string' || body.name === '') return invalidInput('name', 'name is required')
  if ([...ctx.firewalls.values()].some((f) => f.name === body.name)) return uniquenessError('firewall')
  const rules = (Array.isArray(body.rules) ? body.rules : []) as FirewallRule[]
  const bad = invalidRules(rules)
  if (bad) return bad
  const id = ctx.newId()
  const firewall: Firewall = { id, name: body.name, labels: (body.labels ?? {}) as Labels, rules, applied_to: [] }
  ctx.firewalls.set(id, firewall)
  const actions = [ctx.action('set_firewall_rules', [{ id, type: 'firewall' }])]
  const applyTo = Array.isArray(body.apply_to) ? body.apply_to : []
  if (applyTo.length > 0) {
    firewall.applied_to.push(...applyTo)
    actions.push(ctx.action('apply_firewall', [{ id, type: 'firewall' }]))
  }
  return { status: 201, body: { firewall, actions } }
}

export function setFirewallRules(ctx: FirewallContext, id: number, input: unknown): StubResponse {
  const firewall = ctx.firewalls.get(id)
  if (!firewall) return apiError(404, 'not_found', 'firewall not found')
  const rules = (input as { rules?: unknown } | null)?.rules
  if (!Array.isArray(rules)) return invalidInput('rules', 'rules is required')
  const bad = invalidRules(rules as FirewallRule[])
  if (bad) return bad
  firewall.rules = rules as FirewallRule[]
  return { status: 201, body: { actions: [ctx.action('set_firewall_rules', [{ id, type: 'firewall' }])] } }
}

export function applyFirewall(ctx: FirewallContext, id: number, input: unknown): StubResponse {
  const firewall = ctx.firewalls.get(id)
  if (!firewall) return apiError(404, 'not_found', 'firewall not found')
  const applyTo = (input as { apply_to?: unknown } | null)?.apply_to
  if (!Array.isArray(applyTo) || applyTo.length === 0) return invalidInput('apply_to', 'apply_to is required')
  const already = applyTo.find((r) => firewall.applied_to.some((a) => JSON.stringify(a) === JSON.stringify(r)))
  if (already) return apiError(422, 'firewall_already_applied', 'firewall is already applied to the resource')
  firewall.applied_to.push(...applyTo)
  return { status: 201, body: { actions: [ctx.action('apply_firewall', [{ id, type: 'firewall' }])] } }
}

function invalidRules(rules: FirewallRule[]): StubResponse | undefined {
  if (rules.length > 50) return invalidInput('rules', 'at most 50 rules')
  for (const rule of rules) {
    if (!['in', 'out'].includes(rule.direction)) return invalidInput('rules', 'direction must be in or out')
    if (!['tcp', 'udp', 'icmp', 'esp', 'gre'].includes(rule.protocol))
      return invalidInput('rules', 'protocol is invalid')
    const hasPort = rule.port !== undefined && rule.port !== null
    if (hasPort !== (rule.protocol === 'tcp' || rule.protocol === 'udp')) {
      return invalidInput('rules', 'port is required for tcp and udp only')
    }
  }
  return undefined
}
