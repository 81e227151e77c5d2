// The local Hetzner Cloud stub's firewalls: create (with rules and apply_to), set_rules replacing
// every rule, apply_to_resources; the API's limits on rules (at most 50, ports only for tcp and udp).
// Rules are answered whole (source_ips, destination_ips, port, description), as the API sends them.
import type { Action, FirewallResource, FirewallRule, Labels } from './hetzner-types.js'
import { apiError, invalidInput, type StubResponse, uniquenessError } from './stub-errors.js'
import type { StubFirewall, StubFirewallRule, StubServer } from './stub-resources.js'

/** What the firewall routes need of the stub: its firewalls and servers, fresh IDs, actions, the time. */
export interface FirewallContext {
  firewalls: Map<number, StubFirewall>
  servers: Map<number, StubServer>
  newId(): number
  action(command: string, resources: { id: number; type: string }[]): Action
  nowIso(): string
}

export function createFirewall(ctx: FirewallContext, input: unknown): StubResponse {
  const body = (input ?? {}) as Record<string, unknown>
  if (typeof body.name !== 'string' || body.name === '') return invalidInput('name', 'name is required')
  if ([...ctx.firewalls.values()].some((f) => f.name === body.name)) return uniquenessError('firewall')
  const rules = (Array.isArray(body.rules) ? body.rules : []) as FirewallRule[]
  const bad = invalidRules(rules)
  if (bad) return bad
  const id = ctx.newId()
  const firewall: StubFirewall = {
    id,
    name: body.name,
    labels: (body.labels ?? {}) as Labels,
    created: ctx.nowIso(),
    rules: rules.map(wholeRule),
    applied_to: [],
  }
  ctx.firewalls.set(id, firewall)
  const actions = [ctx.action('set_firewall_rules', [{ id, type: 'firewall' }])]
  const applyTo = (Array.isArray(body.apply_to) ? body.apply_to : []) as FirewallResource[]
  if (applyTo.length > 0) {
    applyTo.forEach((resource) => applyOne(ctx, firewall, resource))
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
  firewall.rules = (rules as FirewallRule[]).map(wholeRule)
  return { status: 201, body: { actions: [ctx.action('set_firewall_rules', [{ id, type: 'firewall' }])] } }
}

export function applyFirewall(ctx: FirewallContext, id: number, input: unknown): StubResponse {
  const firewall = ctx.firewalls.get(id)
  if (!firewall) return apiError(404, 'not_found', 'firewall not found')
  const applyTo = (input as { apply_to?: unknown } | null)?.apply_to
  if (!Array.isArray(applyTo) || applyTo.length === 0) return invalidInput('apply_to', 'apply_to is required')
  const already = applyTo.find((r) => firewall.applied_to.some((a) => JSON.stringify(a) === JSON.stringify(r)))
  if (already) return apiError(422, 'firewall_already_applied', 'firewall is already applied to the resource')
  const missing = (applyTo as FirewallResource[]).find((r) => r.type === 'server' && !ctx.servers.has(r.server?.id))
  if (missing) return apiError(404, 'firewall_resource_not_found', 'the server to apply the firewall to was not found')
  for (const resource of applyTo as FirewallResource[]) applyOne(ctx, firewall, resource)
  return { status: 201, body: { actions: [ctx.action('apply_firewall', [{ id, type: 'firewall' }])] } }
}

/** Records the resource on the firewall and, for a server, the firewall on the server's public_net. */
function applyOne(ctx: FirewallContext, firewall: StubFirewall, resource: FirewallResource): void {
  firewall.applied_to.push(resource)
  const server = resource.type === 'server' ? ctx.servers.get(resource.server.id) : undefined
  if (server && !server.public_net.firewalls.some((f) => f.id === firewall.id)) {
    server.public_net.firewalls.push({ id: firewall.id, status: 'applied' })
  }
}

/** A rule as the API stores and answers it: every field, empty or null where the request had none. */
function wholeRule(rule: FirewallRule): StubFirewallRule {
  return {
    direction: rule.direction,
    source_ips: rule.source_ips ?? [],
    destination_ips: rule.destination_ips ?? [],
    protocol: rule.protocol,
    port: rule.port ?? null,
    description: rule.description ?? null,
  }
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
