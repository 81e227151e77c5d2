// The sweep (spec 06): silent nodes become unhealthy, then lost (jobs fenced, allocations
// released, or stranded on a stateful pool's node, one node_lost event each), a lost node heard from
// again gets its stranded allocations back, and provisioning nodes whose enrollment secret expired
// unused become failed. Run by `fleetkit sweep` and by the gateway's sweeper.
import type { StatePool } from '../../store/transaction.js'

import {
  type ExpiredEnrollment,
  failExpiredEnrollments,
  findLostCandidates,
  markSilentNodesUnhealthy,
  reclaimLostNode,
  resumeStrandedAllocations,
  type ResumedAllocations,
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
    /**
     * Kept and marked stranded (a stateful pool's node): released only by a person or resumed by its return.
     * @minimum 0
     * @asType integer
     */
    strandedAllocations: number
  }[]
  /** Lost nodes heard from again whose stranded allocations are active again. */
  resumed: ResumedAllocations[]
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
    const resumed = await resumeStrandedAllocations(session)
    const unhealthy = await markSilentNodesUnhealthy(session, thresholds.unhealthyAfterSeconds)
    const failed = await failExpiredEnrollments(session)
    return { lost, resumed, unhealthy, failed }
  })
  if (!outcome.locked)
    return { swept: false, unhealthy: [], lost: [], resumed: [], failed: [], thresholds, durationMs: now() - started }
  const { lost, resumed, unhealthy, failed } = outcome.value
  return {
    swept: true,
    unhealthy,
    resumed,
    failed,
    lost: lost.map((l) => ({
      nodeId: l.nodeId,
      lostAt: l.lostAt.toISOString(),
      silentSeconds: l.silentSeconds,
      fencedJobs: l.fencedJobs.length,
      releasedAllocations: l.releasedAllocations.length,
      strandedAllocations: l.strandedAllocations.length,
    })),
    thresholds,
    durationMs: now() - started,
  }
}
