// Which nodes `fleetkit reconcile` repairs: the ONE place that decides "drifted" and "behind". Built on
// fleet ready's verdict (the last recorded sync and drift runs, and the drift the node's agent reports,
// judged against the definition now). Held, drained, parked and not admitted nodes are left alone.
import type { Definition } from '../../definition/types.js'
import type { Queryable } from '../../store/database.js'
import { listNodeHolds, type NodeHold } from '../../store/nodes/node-holds.js'
import { type FleetReadyResult, fleetReady } from '../view/fleet-ready.js'

export interface ReconcileCandidate {
  nodeId: string
  pool: string
  /** drifted: a drift check found the host differs since its last sync; behind: not converged for this definition. */
  why: 'drifted' | 'behind'
  /** What fleet ready said, in one line. */
  detail: string
}

export interface ReconcileSkip {
  nodeId: string
  pool: string
  /** Why reconcile leaves it alone, in one line. */
  reason: string
}

export interface ReconcileSelection {
  /** Nodes to sync, by id. */
  repair: ReconcileCandidate[]
  /** Nodes reconcile must not touch (held, drained, parked, not admitted, silent), by id. */
  skipped: ReconcileSkip[]
  /** Nodes it may act on, repaired or not: what a drift check reads. */
  eligible: string[]
}

/** Statuses whose node is never synced by reconcile, whatever fleet ready says of it. */
const HANDS_OFF_STATUS: Record<string, string> = {
  draining: 'draining (fleetkit node undrain to bring it back)',
  parked: 'parked (fleetkit node unpark)',
  retired: 'retired',
  lost: 'lost: its agent is silent',
  unhealthy: 'unhealthy: its agent is silent',
  provisioning: 'provisioning: not enrolled yet',
  failed: 'failed provisioning',
  unknown: 'not in the state database',
}

/**
 * The selection from fleet ready's verdict and the holds: pure, so its rules are tested without a database.
 * A node's agent version is judged by fleet ready against its own pin when the definition gives one.
 */
export function classifyForReconcile(verdict: FleetReadyResult, holds: readonly NodeHold[]): ReconcileSelection {
  const held = new Map(holds.map((h) => [h.nodeId, h]))
  const repair: ReconcileCandidate[] = []
  const skipped: ReconcileSkip[] = []
  const eligible: string[] = []
  for (const n of [...verdict.nodes].sort((a, b) => a.nodeId.localeCompare(b.nodeId))) {
    const hold = held.get(n.nodeId)
    const criteria = new Set(n.failures.map((f) => f.criterion))
    const skip = (reason: string) => skipped.push({ nodeId: n.nodeId, pool: n.pool, reason })
    if (hold) skip(`held by ${hold.heldBy} since ${hold.heldAt.toISOString()}: ${hold.reason}`)
    else if (HANDS_OFF_STATUS[n.status]) skip(HANDS_OFF_STATUS[n.status]!)
    else if (criteria.has('admitted')) skip(`not admitted (fleetkit node admit ${n.nodeId})`)
    else {
      eligible.push(n.nodeId)
      const drift = n.failures.find((f) => f.criterion === 'drift')
      const behind = n.failures.find((f) => f.criterion === 'converged' || f.criterion === 'agent_version')
      if (drift) repair.push({ nodeId: n.nodeId, pool: n.pool, why: 'drifted', detail: drift.detail })
      else if (behind) repair.push({ nodeId: n.nodeId, pool: n.pool, why: 'behind', detail: behind.detail })
    }
  }
  return { repair, skipped, eligible }
}

/** The nodes to repair now, from the state and the definition as it is. */
export async function selectReconcileNodes(options: {
  pool: Queryable
  definition: Definition
  definitionText: string
}): Promise<ReconcileSelection> {
  const verdict = await fleetReady(options)
  return classifyForReconcile(verdict, await listNodeHolds(options.pool))
}
