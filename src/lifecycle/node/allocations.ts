// `fleetkit alloc reserve | release | list`: capacity reservations on schedulable nodes; the
// rule itself (node locked, capacity summed) is the store's, shared with the operator API. And
// `alloc release --stranded`: the person's decision on a stateful pool's lost node, asked first.
import type { StatePool } from '../../store/transaction.js'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { shownOnTerminal } from '../../protocol/terminal-text.js'
import {
  type AllocationRow,
  type AllocationStatus,
  listAllocations,
  listStrandedAllocations,
  releaseAllocationById,
  releaseStrandedAllocations,
  reserveAllocation,
} from '../../store/scheduling/allocations.js'
import type { Queryable } from '../../store/database.js'
import type { Confirm } from './node-transition.js'

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
  /** `stranded`: held on a lost node of a stateful pool until a person releases it or the node returns. */
  status: AllocationStatus
  /** @format date-time */
  createdAt: string
  /** @format date-time */
  releasedAt: string | null
  releaseReason: string | null
  /**
   * When its node was lost; kept after a release, cleared when it resumed.
   * @format date-time
   */
  strandedAt: string | null
}

function viewAllocation(a: AllocationRow): AllocationView {
  return {
    ...a,
    createdAt: a.createdAt.toISOString(),
    releasedAt: a.releasedAt?.toISOString() ?? null,
    strandedAt: a.strandedAt?.toISOString() ?? null,
  }
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

export interface StrandedReleaseResult {
  /** The node id or allocation id the operator named. */
  target: string
  released: AllocationView[]
  message: string
}

/**
 * `fleetkit alloc release --stranded NODE|ID`: a person gives up what a stateful pool's lost node held.
 * Asked first (`confirm`: on a terminal, else --yes); nothing stranded there is ALLOCATION_UNKNOWN.
 */
export async function releaseStranded(options: {
  pool: StatePool
  target: string
  actor: string
  confirm: Confirm
}): Promise<StrandedReleaseResult> {
  const { pool, target, actor } = options
  const shown = JSON.stringify(target.slice(0, 64))
  const stranded = await listStrandedAllocations(pool, target)
  if (stranded.length === 0)
    throw new FleetkitError(
      'ALLOCATION_UNKNOWN',
      `no stranded allocation matches ${shown} (no such allocation or node, or nothing stranded there)`,
      { actions: ['fleetkit alloc list --status stranded'], data: { target: target.slice(0, 64) } },
    )
  const nodes = [...new Set(stranded.map((a) => a.nodeId))]
  await options.confirm({
    what: `release ${stranded.length} stranded allocation(s) on ${nodes.join(', ')} (${stranded.map((a) => a.owner).join(', ')}): their capacity is given up and whatever state they held on the lost node is abandoned`,
    command: `fleetkit alloc release --stranded ${target} --yes`,
    data: { target, allocationIds: stranded.map((a) => a.id) },
  })
  const released = (
    await releaseStrandedAllocations(
      pool,
      stranded.map((a) => a.id),
      actor,
    )
  ).map(viewAllocation)
  const left = stranded.length - released.length
  return {
    target,
    released,
    message: `Released ${released.length} stranded allocation(s) on ${nodes.join(', ')}${left > 0 ? ` (${left} resumed or released meanwhile)` : ''}`,
  }
}

export async function list(
  pool: Queryable,
  filter: { nodeId?: string; owner?: string; status?: AllocationStatus },
): Promise<AllocationView[]> {
  return (await listAllocations(pool, filter)).map(viewAllocation)
}

/** One line of `alloc list`. The owner was chosen by whoever reserved: shown escaped (terminal-text.ts). */
export function formatAllocation(a: AllocationView): string {
  return `${a.id}  ${a.nodeId}  ${shownOnTerminal(a.owner)}  cpu ${a.cpu}  memory ${a.memoryMib} MiB  disk ${a.diskGib} GiB  ${a.status}${a.releaseReason ? ` (${a.releaseReason})` : ''}`
}

/** What `fleetkit alloc release` returns: the one allocation released, or, with --stranded, what was. */
export type AllocReleaseResult = AllocationView | StrandedReleaseResult

export function formatReleased(result: AllocReleaseResult): string {
  return 'released' in result
    ? result.message
    : `Released ${result.id} on ${result.nodeId} (owner ${shownOnTerminal(result.owner)})`
}
