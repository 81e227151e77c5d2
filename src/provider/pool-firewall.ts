// The pool's provider firewall `fleetkit-<pool>` (spec 06): 22/tcp from the operators' CIDRs, and
// 80/443 from anywhere on an ingress pool; nothing else comes in (the agent only dials out, and the
// provider firewall lets every outbound connection through). Converged to exactly those rules.
import type { Provider } from './provider.js'
import type { FirewallRule } from './hetzner-types.js'

const ANYWHERE = ['0.0.0.0/0', '::/0']

export function firewallName(pool: string): string {
  return `fleetkit-${pool}`
}

/** The whole rule set of a pool's firewall, in a fixed order (so a converged one compares equal). */
export function poolFirewallRules(operatorCidrs: readonly string[], ingress: boolean): FirewallRule[] {
  const rules: FirewallRule[] = [
    {
      direction: 'in',
      protocol: 'tcp',
      port: '22',
      source_ips: [...operatorCidrs],
      description: 'ssh from the operators',
    },
  ]
  if (ingress) {
    for (const port of ['80', '443'])
      rules.push({ direction: 'in', protocol: 'tcp', port, source_ips: ANYWHERE, description: 'ingress' })
  }
  return rules
}

function sameRules(a: readonly FirewallRule[], b: readonly FirewallRule[]): boolean {
  const key = (r: FirewallRule) =>
    JSON.stringify([r.direction, r.protocol, r.port ?? null, [...(r.source_ips ?? [])].sort(), r.description ?? null])
  return a.length === b.length && a.every((rule, i) => key(rule) === key(b[i]!))
}

/**
 * Creates `fleetkit-<pool>` with `rules`, or replaces the rules of the existing one when they differ
 * (set_rules sends the whole set). Returns its ID, for the create request's `firewalls`.
 */
export async function convergePoolFirewall(
  client: Provider,
  fleet: string,
  pool: string,
  rules: FirewallRule[],
): Promise<{ id: number; changed: boolean }> {
  const name = firewallName(pool)
  const [existing] = await client.listFirewalls({ name })
  if (!existing) {
    const labels = { 'fleetkit.fleet': fleet, 'fleetkit.pool': pool }
    const created = await client.createFirewall({ name, labels, rules })
    return { id: created.firewall.id, changed: true }
  }
  if (sameRules(existing.rules, rules)) return { id: existing.id, changed: false }
  await client.setFirewallRules(existing.id, rules)
  return { id: existing.id, changed: true }
}
