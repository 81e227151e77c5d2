// Each node's drift in one place, for whoever acts on it (fleet ready, the status page, a reconcile):
// `drift` is what its agent last reported against the fingerprint of its last sync (in_sync, drifted
// with the parts, unknown with why); `behind` is whether that sync applied another definition than the
// current one. A behind node is not drifted: its host is as its last sync left it, the definition moved.
import type { Queryable } from '../../store/database.js'
import type { DriftState } from '../../store/nodes/node-drift.js'
import { type NodeReadinessFacts, lastSyncedDefinition, readinessFacts } from '../../store/view/readiness.js'

export interface NodeDriftState {
  nodeId: string
  pool: string
  status: string
  drift: DriftState
  /** The parts that differ (nft, sshd, unit, path ...); empty unless drifted. */
  parts: string[]
  /** Why the drift is unknown: not_reported (no agent digest judged yet), no_fingerprint, other_resources, stale ... */
  reason: string | null
  /** When the drift state began; null when never judged. */
  since: Date | null
  /** Its last sync did not converge it with the current definition (or no sync ever did). */
  behind: boolean
  /** The last sync run that attempted it; null when none did. */
  lastSyncRunId: number | null
}

const CONVERGED: ReadonlySet<string> = new Set(['converged', 'changed'])

/** One node's drift and whether it is behind `current` (a definition's SHA-256; null: none known, so behind). */
export function driftStateOf(f: NodeReadinessFacts, current: string | null): NodeDriftState {
  return {
    nodeId: f.id,
    pool: f.pool,
    status: f.status,
    drift: f.agentDrift?.state ?? 'unknown',
    parts: f.agentDrift?.parts ?? [],
    reason: f.agentDrift ? f.agentDrift.reason : 'not_reported',
    since: f.agentDrift?.since ?? null,
    behind:
      current === null ||
      f.lastSync === null ||
      !CONVERGED.has(f.lastSync.state) ||
      f.lastSync.definitionSha256 !== current,
    lastSyncRunId: f.lastSync?.runId ?? null,
  }
}

/**
 * Every node that should serve (not retired, parked or draining), or the named ones. The current
 * definition is `definitionSha256` (the file `fleet ready` reads) or, without it, the definition the
 * last finished sync applied; with neither (no sync ever finished), every node is behind.
 */
export async function nodeDriftStates(
  pool: Queryable,
  options: { definitionSha256?: string; nodeIds?: readonly string[]; pools?: readonly string[] | null } = {},
): Promise<NodeDriftState[]> {
  const current = options.definitionSha256 ?? (await lastSyncedDefinition(pool))?.definitionSha256 ?? null
  const facts = await readinessFacts(pool, { nodeIds: options.nodeIds ?? [], pools: options.pools ?? null })
  return facts.map((f) => driftStateOf(f, current))
}
