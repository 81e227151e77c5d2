// `fleetkit alloc reserve | release | list`: capacity reservations on schedulable nodes; the
// rule itself (node locked, capacity summed) is the store's, shared with the operator API.
import type { StatePool } from '../../store/transaction.js'

import {
  type AllocationRow,
  listAllocations,
  releaseAllocationById,
  reserveAllocation,
} from '../../store/scheduling/allocations.js'
import type { Queryable } from '../../store/database.js'

export interface AllocationView {
  /** @format uuid */
  id: string
  nodeId: string
  /** @minLength 1 */
  owner: string
  /** @minimum 0 */
  cpu: number
  /**
   * @minimum 0
   * @asType integer
   */
  memoryMib: number
  /**
   * @minimum 0
   * @asType integer
   */
  diskGib: number
  status: 'active' | 'released'
  /** @format date-time */
  createdAt: string
  /** @format date-time */
  releasedAt: string | null
  releaseReason: string | null
}

function viewAllocation(a: AllocationRow): AllocationView {
  return { ...a, createdAt: a.createdAt.toISOString(), releasedAt: a.releasedAt?.toISOString() ?? null }
}

export async function reserve(
  pool: StatePool,
  request: { nodeId: string; owner: string; cpu: number; memoryMib: number; diskGib: number; actor: string },
): Promise<AllocationView> {
  return viewAllocation(await reserveAllocation(pool, request))
}

export async function release(pool: StatePool, id: string, actor: string): Promise<AllocationView> {
  return viewAllocation(await releaseAllocationById(pool, id, actor))
}

export async function list(
  pool: Queryable,
  filter: { nodeId?: string; owner?: string; status?: 'active' | 'released' },
): Promise<AllocationView[]> {
  return (await listAllocations(pool, filter)).map(viewAllocation)
}

export function formatAllocation(a: AllocationView): string {
  return `${a.id}  ${a.nodeId}  ${a.owner}  cpu ${a.cpu}  memory ${a.memoryMib} MiB  disk ${a.diskGib} GiB  ${a.status}${a.releaseReason ? ` (${a.releaseReason})` : ''}`
}
