// Rule: a pool's docker network base stays clear of addresses the host must still route to: the
// nodes' own SSH addresses, the operator CIDRs, and Docker's default bridge when the pool keeps it.
import { cidrsOverlap, formatCidr, type Ipv4Cidr, parseIpv4, parseIpv4Cidr } from '../ipv4.js'
import { pointer } from '../json-pointer.js'
import type { DefinitionError } from '../types.js'
import { type DefinitionRule, semanticError } from './rule.js'

/** docker0's network when the daemon is not given a `bip` (the pool's defaultBridgeCidr). */
const DOCKER_DEFAULT_BRIDGE = '172.17.0.0/16'

interface Claim {
  cidr: Pick<Ipv4Cidr, 'network' | 'size'>
  /** Said only for a conflict: a fleet has thousands of node addresses. */
  what: () => string
}

export const dockerNetworkBasesClear: DefinitionRule = ({ definition }) => {
  if (!Object.values(definition.pools).some((pool) => pool.dockerNetworkPolicy)) return []
  const claims: Claim[] = []
  for (const [index, cidr] of definition.operators.cidrs.entries()) {
    const parsed = parseIpv4Cidr(cidr)
    if (parsed)
      claims.push({ cidr: parsed, what: () => `operator CIDR ${cidr} (${pointer('operators', 'cidrs', index)})` })
  }
  for (let index = 0; index < definition.nodes.length; index++) {
    const node = definition.nodes[index]!
    const host = node.ssh?.host
    const address = host === undefined ? undefined : parseIpv4(host)
    if (address !== undefined)
      claims.push({
        cidr: { network: address, size: 1 },
        what: () => `node "${node.id}" address ${host} (${pointer('nodes', index, 'ssh', 'host')})`,
      })
  }
  const defaultBridge = parseIpv4Cidr(DOCKER_DEFAULT_BRIDGE)!
  const errors: DefinitionError[] = []
  for (const [name, pool] of Object.entries(definition.pools)) {
    const policy = pool.dockerNetworkPolicy
    const base = policy === undefined ? undefined : parseIpv4Cidr(policy.base)
    if (!policy || !base) continue // DOCKER_NETWORK_POLICY_INVALID reports a malformed base
    const against =
      policy.defaultBridgeCidr === undefined
        ? [
            ...claims,
            {
              cidr: defaultBridge,
              what: () => `Docker's default bridge ${DOCKER_DEFAULT_BRIDGE} (the pool sets no defaultBridgeCidr)`,
            },
          ]
        : claims
    for (let i = 0; i < against.length; i++) {
      const claim = against[i]!
      if (!cidrsOverlap(base, claim.cidr)) continue
      errors.push(
        semanticError({
          code: 'DOCKER_NETWORK_BASE_CONFLICT',
          path: pointer('pools', name, 'dockerNetworkPolicy', 'base'),
          expected: `a range apart from ${formatCidr({ network: claim.cidr.network, prefix: 32 - Math.log2(claim.cidr.size) })}`,
          actual: policy.base,
          message: `pool "${name}" docker network base ${policy.base} overlaps ${claim.what()}; containers would shadow that route`,
        }),
      )
    }
  }
  return errors
}
