// Rule: each pool's docker network policy is sound arithmetic: an IPv4 base, an allocation
// prefix between the base's and /29, enough subnets for its runners, no overlaps across pools,
// and a default bridge that is a usable address with room for the runners.
import { cidrsOverlap, formatCidr, formatIpv4, type Ipv4Cidr, parseIpv4Cidr } from '../ipv4.js'
import { pointer } from '../json-pointer.js'
import type { Definition, DefinitionError, DockerNetworkPolicy } from '../types.js'
import { type DefinitionRule, semanticError } from './rule.js'

const MAX_DOCKER_NETWORK_POOLS = 64
const LONGEST_ALLOCATION_PREFIX = 29

interface PoolRange {
  pool: string
  base: Ipv4Cidr
}

export const dockerNetworkPolicySound: DefinitionRule = ({ definition }) => {
  const errors: DefinitionError[] = []
  const policies = Object.entries(definition.pools).flatMap(([pool, p]) =>
    p.dockerNetworkPolicy ? [[pool, p.dockerNetworkPolicy] as const] : [],
  )
  if (policies.length > MAX_DOCKER_NETWORK_POOLS) {
    errors.push(
      semanticError({
        code: 'DOCKER_NETWORK_POLICY_INVALID',
        path: pointer('pools'),
        expected: `at most ${MAX_DOCKER_NETWORK_POOLS} pools with a dockerNetworkPolicy`,
        actual: policies.length,
        message: `${policies.length} pools declare a dockerNetworkPolicy; at most ${MAX_DOCKER_NETWORK_POOLS} fit the address plan`,
      }),
    )
  }
  const ranges: PoolRange[] = []
  for (const [pool, policy] of policies) {
    const base = checkBase(pool, policy, errors)
    if (!base) continue
    for (const other of ranges) {
      if (!cidrsOverlap(other.base, base)) continue
      errors.push(
        semanticError({
          code: 'DOCKER_NETWORK_POLICY_OVERLAP',
          path: pointer('pools', pool, 'dockerNetworkPolicy', 'base'),
          expected: `a range apart from pool "${other.pool}" (${formatCidr(other.base)})`,
          actual: policy.base,
          message: `pool "${pool}" base ${policy.base} overlaps pool "${other.pool}" base ${formatCidr(other.base)}`,
        }),
      )
    }
    ranges.push({ pool, base })
    if (checkPrefix(pool, policy, base, errors)) checkSubnetCount(pool, policy, base, definition, errors)
  }
  for (const [pool, policy] of policies) checkDefaultBridge(pool, policy, ranges, errors)
  return errors
}

function checkBase(pool: string, policy: DockerNetworkPolicy, errors: DefinitionError[]): Ipv4Cidr | undefined {
  const path = pointer('pools', pool, 'dockerNetworkPolicy', 'base')
  const base = parseIpv4Cidr(policy.base)
  if (!base) {
    errors.push(
      semanticError({
        code: 'DOCKER_NETWORK_POLICY_INVALID',
        path,
        expected: 'an IPv4 CIDR such as 10.200.0.0/16',
        actual: policy.base,
        message: `pool "${pool}" base ${JSON.stringify(policy.base)} is not an IPv4 CIDR`,
      }),
    )
    return undefined
  }
  if (base.address !== base.network) {
    errors.push(
      semanticError({
        code: 'DOCKER_NETWORK_POLICY_INVALID',
        path,
        expected: formatCidr(base),
        actual: policy.base,
        message: `pool "${pool}" base ${policy.base} has host bits set; the network is ${formatCidr(base)}`,
      }),
    )
    return undefined
  }
  return base
}

function checkPrefix(pool: string, policy: DockerNetworkPolicy, base: Ipv4Cidr, errors: DefinitionError[]): boolean {
  const path = pointer('pools', pool, 'dockerNetworkPolicy', 'prefix')
  if (policy.prefix < base.prefix || policy.prefix > LONGEST_ALLOCATION_PREFIX) {
    errors.push(
      semanticError({
        code: 'DOCKER_NETWORK_POLICY_INVALID',
        path,
        expected: `a prefix from /${base.prefix} (the base) to /${LONGEST_ALLOCATION_PREFIX}`,
        actual: policy.prefix,
        message:
          policy.prefix < base.prefix
            ? `pool "${pool}" allocates /${policy.prefix} networks, broader than its base /${base.prefix}`
            : `pool "${pool}" allocates /${policy.prefix} networks; /${LONGEST_ALLOCATION_PREFIX} is the longest that leaves room for containers`,
      }),
    )
    return false
  }
  return true
}

/** Subnets one host of the pool needs: all runners' networks plus the reserve plus one, or only reserve plus one when every node is disabled. */
export function subnetsNeeded(pool: string, policy: DockerNetworkPolicy, definition: Definition): number {
  const nodes = definition.nodes.filter((node) => node.pool === pool)
  const allDisabled = nodes.length > 0 && nodes.every((node) => node.state === 'disabled')
  return allDisabled
    ? policy.reserveSubnets + 1
    : policy.maxRunners * policy.networksPerRunner + policy.reserveSubnets + 1
}

function checkSubnetCount(
  pool: string,
  policy: DockerNetworkPolicy,
  base: Ipv4Cidr,
  definition: Definition,
  errors: DefinitionError[],
): void {
  const available = 2 ** (policy.prefix - base.prefix)
  const needed = subnetsNeeded(pool, policy, definition)
  if (available >= needed) return
  errors.push(
    semanticError({
      code: 'DOCKER_NETWORK_POLICY_TOO_SMALL',
      path: pointer('pools', pool, 'dockerNetworkPolicy'),
      expected: `at least ${needed} /${policy.prefix} subnets`,
      actual: available,
      message: `pool "${pool}" base ${policy.base} holds ${available} /${policy.prefix} subnets; it needs ${needed} (maxRunners ${policy.maxRunners} x networksPerRunner ${policy.networksPerRunner} + reserveSubnets ${policy.reserveSubnets} + 1)`,
    }),
  )
}

function checkDefaultBridge(
  pool: string,
  policy: DockerNetworkPolicy,
  ranges: PoolRange[],
  errors: DefinitionError[],
): void {
  if (policy.defaultBridgeCidr === undefined) return
  const path = pointer('pools', pool, 'dockerNetworkPolicy', 'defaultBridgeCidr')
  const text = policy.defaultBridgeCidr
  const bridge = parseIpv4Cidr(text)
  if (!bridge || bridge.prefix > 30) {
    errors.push(
      semanticError({
        code: 'DOCKER_NETWORK_POLICY_INVALID',
        path,
        expected: 'an IPv4 interface address with prefix, such as 10.199.0.1/24 (/30 or broader)',
        actual: text,
        message: `pool "${pool}" defaultBridgeCidr ${JSON.stringify(text)} is not an IPv4 address with a /30 or broader prefix`,
      }),
    )
    return
  }
  const broadcast = bridge.network + bridge.size - 1
  if (bridge.address === bridge.network || bridge.address === broadcast) {
    errors.push(
      semanticError({
        code: 'DOCKER_NETWORK_POLICY_INVALID',
        path,
        expected: `a usable gateway address in ${formatCidr(bridge)}, such as ${formatIpv4(bridge.network + 1)}/${bridge.prefix}`,
        actual: text,
        message: `pool "${pool}" defaultBridgeCidr ${text} is the ${bridge.address === bridge.network ? 'network base' : 'broadcast address'}, not a usable gateway`,
      }),
    )
  }
  for (const range of ranges) {
    if (!cidrsOverlap(range.base, bridge)) continue
    errors.push(
      semanticError({
        code: 'DOCKER_NETWORK_POLICY_OVERLAP',
        path,
        expected: `a network apart from pool "${range.pool}" (${formatCidr(range.base)})`,
        actual: text,
        message: `pool "${pool}" defaultBridgeCidr ${text} overlaps pool "${range.pool}" base ${formatCidr(range.base)}`,
      }),
    )
  }
  const left = bridge.size - 3
  const needed = policy.maxRunners + policy.reserveSubnets
  if (left < needed) {
    errors.push(
      semanticError({
        code: 'DOCKER_NETWORK_POLICY_TOO_SMALL',
        path,
        expected: `at least ${needed} addresses after network, broadcast and gateway (maxRunners + reserveSubnets)`,
        actual: left,
        message: `pool "${pool}" defaultBridgeCidr ${text} leaves ${left} addresses after network, broadcast and gateway; it needs ${needed}`,
      }),
    )
  }
}
