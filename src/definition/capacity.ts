// Capacity arithmetic shared by the capacity rule, the transition rules and the summary:
// what a node offers its pool (maxCapacity, else its server type less the host reserve).
import { findServerType, type HostPolicy, type ServerTypeSize } from './host-policy.js'
import type { Capacity, Definition, NodeDeclaration, NodeDeclaredState } from './types.js'

export const CAPACITY_DIMENSIONS = ['cpu', 'memoryMiB', 'diskGiB'] as const

export const ZERO_CAPACITY: Capacity = { cpu: 0, memoryMiB: 0, diskGiB: 0 }

/** Active and drained nodes hold their capacity (a drained node still runs its jobs); disabled ones hold none. */
export function reservesCapacity(state: NodeDeclaredState): boolean {
  return state !== 'disabled'
}

/** The node's server type (its own, else its pool's) and its size, when the policy knows it. */
export function nodeServerType(
  node: NodeDeclaration,
  definition: Definition,
  policy: HostPolicy,
): { name: string; size: ServerTypeSize } | undefined {
  const name = node.serverType ?? definition.pools[node.pool]?.serverType
  const size = name === undefined ? undefined : findServerType(policy, name)
  return name === undefined || size === undefined ? undefined : { name, size }
}

/**
 * What a machine of this size offers jobs: its size less the host reserve it keeps for itself. The one
 * place this is worked out: a node's default capacity and the ceiling validate puts on maxCapacity.
 */
export function serverTypeOffer(
  size: Pick<ServerTypeSize, 'cores' | 'memoryMiB' | 'diskGiB'>,
  policy: HostPolicy,
): Capacity {
  return {
    // cpu may be fractional (0.5 vCPU); round away binary noise such as 4 - 0.1.
    cpu: Math.max(0, Math.round((size.cores - policy.reserve.cpu) * 1000) / 1000),
    memoryMiB: Math.max(0, size.memoryMiB - policy.reserve.memoryMiB),
    diskGiB: Math.max(0, size.diskGiB - policy.reserve.diskGiB),
  }
}

/** What the node offers its pool, or undefined when neither maxCapacity nor a known server type says. */
export function nodeCapacity(node: NodeDeclaration, definition: Definition, policy: HostPolicy): Capacity | undefined {
  if (node.maxCapacity) return node.maxCapacity
  const type = nodeServerType(node, definition, policy)
  return type === undefined ? undefined : serverTypeOffer(type.size, policy)
}

/** The machine an offer needs: `capacity` plus the host reserve (what sizing.minimum is compared with). */
export function withHostReserve(capacity: Capacity, policy: HostPolicy): Capacity {
  return addCapacity(capacity, policy.reserve)
}

export function addCapacity(a: Capacity, b: Capacity): Capacity {
  // cpu may be fractional (0.5 vCPU); round away binary noise such as 0.1 + 0.2.
  return {
    cpu: Math.round((a.cpu + b.cpu) * 1000) / 1000,
    memoryMiB: a.memoryMiB + b.memoryMiB,
    diskGiB: a.diskGiB + b.diskGiB,
  }
}

/** The dimensions in which `used` is larger than `limit`. */
export function dimensionsOver(used: Capacity, limit: Capacity): Array<(typeof CAPACITY_DIMENSIONS)[number]> {
  return CAPACITY_DIMENSIONS.filter((d) => used[d] > limit[d])
}

/** Each dimension over its limit, in numbers: `cpu 9 > 8, memoryMiB 9000 > 8192`. */
export function formatExcess(used: Capacity, limit: Capacity): string {
  return dimensionsOver(used, limit)
    .map((d) => `${d} ${used[d]} > ${limit[d]}`)
    .join(', ')
}

export function formatCapacity(c: Capacity): string {
  return `cpu ${c.cpu}, memoryMiB ${c.memoryMiB}, diskGiB ${c.diskGiB}`
}

export interface PoolReservation {
  reserved: Capacity
  reservingNodes: number
}

/** Per pool: the sum of what its active and drained nodes reserve (nodes of unknown pools are skipped). */
export function poolReservations(definition: Definition, policy: HostPolicy): Map<string, PoolReservation> {
  const result = new Map<string, PoolReservation>()
  for (const name of Object.keys(definition.pools)) result.set(name, { reserved: ZERO_CAPACITY, reservingNodes: 0 })
  for (let i = 0; i < definition.nodes.length; i++) {
    const node = definition.nodes[i]!
    const entry = result.get(node.pool)
    if (!entry || !reservesCapacity(node.state)) continue
    const capacity = nodeCapacity(node, definition, policy)
    if (!capacity) continue
    entry.reserved = addCapacity(entry.reserved, capacity)
    entry.reservingNodes++
  }
  return result
}
