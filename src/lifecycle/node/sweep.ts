// The sweep (spec 06): silent nodes become unhealthy, then lost (jobs fenced, allocations
// released, one node_lost event each), and provisioning nodes whose enrollment secret expired
// unused become failed. Run by `fleetkit sweep` and by the gateway's sweeper.
import type { StatePool } from '../../store/transaction.js'

import {
  type ExpiredEnrollment,
  failExpiredEnrollments,
  findLostCandidates,
  markSilentNodesUnhealthy,
  reclaimLostNode,
  SWEEP_LOCK_KEY,
  type LostReclamation,
  type UnhealthyTransition,
} from '../../store/nodes/sweep.js'
import { withSessionLock } from '../../store/advisory-lock.js'
import type { SweepThresholds } from './thresholds.js'

export interface SweepResult {
  /** False when another sweep held the lock: nothing was judged. */
  swept: boolean
  unhealthy: UnhealthyTransition[]
  lost: {
    nodeId: string
    /** @format date-time */
    lostAt: string
    /**
     * @minimum 0
     * @asType integer
     */
    silentSeconds: number
    /**
     * @minimum 0
     * @asType integer
     */
    fencedJobs: number
    /**
     * @minimum 0
     * @asType integer
     */
    releasedAllocations: number
  }[]
  /** Provisioning nodes whose enrollment secret expired unused: now `failed`. */
  failed: ExpiredEnrollment[]
  thresholds: SweepThresholds
  /** @minimum 0 */
  durationMs: number
}

/**
 * One sweep on one checked-out connection holding the sweep lock (session level, so a crashed
 * sweeper frees it). Each loss is its own single-statement transaction: one failure leaves the others.
 */
export async function runSweep(
  pool: StatePool,
  thresholds: SweepThresholds,
  now: () => number = () => performance.now(),
): Promise<SweepResult> {
  const started = now()
  const outcome = await withSessionLock(pool, SWEEP_LOCK_KEY, async (session) => {
    const lost: LostReclamation[] = []
    for (const nodeId of await findLostCandidates(session, thresholds.lostAfterSeconds)) {
      const reclaimed = await reclaimLostNode(session, nodeId, thresholds.lostAfterSeconds)
      if (reclaimed) lost.push(reclaimed)
    }
    const unhealthy = await markSilentNodesUnhealthy(session, thresholds.unhealthyAfterSeconds)
    const failed = await failExpiredEnrollments(session)
    return { lost, unhealthy, failed }
  })
  if (!outcome.locked)
    return { swept: false, unhealthy: [], lost: [], failed: [], thresholds, durationMs: now() - started }
  const { lost, unhealthy, failed } = outcome.value
  return {
    swept: true,
    unhealthy,
    failed,
    lost: lost.map((l) => ({
      nodeId: l.nodeId,
      lostAt: l.lostAt.toISOString(),
      silentSeconds: l.silentSeconds,
      fencedJobs: l.fencedJobs.length,
      releasedAllocations: l.releasedAllocations.length,
    })),
    thresholds,
    durationMs: now() - started,
  }
}
