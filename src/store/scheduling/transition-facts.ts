// What `fleetkit validate --since` asks the state: a node's active allocations and live job
// leases, and whether a canary run proved an image or agent version (recorded here by sync).
import type { Clock } from '../../config/clock.js'
import type { TransitionFacts } from '../../definition/transitions/facts.js'
import type { Queryable } from '../database.js'

export type CanaryProofKind = 'image' | 'agentVersion'

export interface CanaryProof {
  kind: CanaryProofKind
  value: string
  /** The canary node the revision was proven on. */
  nodeId: string
  provenAt: Date
}

/** Allocations of the node still held: `active`, or `stranded` on a stateful pool's lost node. */
export async function countActiveAllocations(q: Queryable, nodeId: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM allocations WHERE node_id = $1 AND status IN ('active', 'stranded')",
    [nodeId],
  )
  return rows[0]?.n ?? 0
}

/**
 * Jobs the node holds under a lease that has not expired (an expired one may be re-leased elsewhere).
 * Expiry is judged on the database's clock, as leasing does (issue 11); `_now` is kept for callers.
 */
export async function countLiveLeases(q: Queryable, nodeId: string, _now: Date): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM jobs WHERE node_id = $1 AND status = 'leased' AND lease_expires_at > now()",
    [nodeId],
  )
  return rows[0]?.n ?? 0
}

export async function isCanaryProven(q: Queryable, kind: CanaryProofKind, value: string): Promise<boolean> {
  const { rows } = await q.query('SELECT 1 FROM canary_proofs WHERE kind = $1 AND value = $2', [kind, value])
  return rows.length > 0
}

/**
 * Record that a canary run proved `value`. The first proof stands: proving it again changes
 * nothing and returns false.
 */
export async function recordCanaryProof(q: Queryable, proof: CanaryProof): Promise<boolean> {
  const { rowCount } = await q.query(
    'INSERT INTO canary_proofs (kind, value, node_id, proven_at) VALUES ($1, $2, $3, $4) ON CONFLICT (kind, value) DO NOTHING',
    [proof.kind, proof.value, proof.nodeId, proof.provenAt],
  )
  return (rowCount ?? 0) > 0
}

export async function getCanaryProof(
  q: Queryable,
  kind: CanaryProofKind,
  value: string,
): Promise<CanaryProof | undefined> {
  const { rows } = await q.query<{ node_id: string; proven_at: Date }>(
    'SELECT node_id, proven_at FROM canary_proofs WHERE kind = $1 AND value = $2',
    [kind, value],
  )
  const row = rows[0]
  return row ? { kind, value, nodeId: row.node_id, provenAt: row.proven_at } : undefined
}

/** The transition rules' facts read from the state; a lease is live if it outlasts `clock.now()`. */
export function storeTransitionFacts(q: Queryable, clock: Clock): TransitionFacts {
  return {
    activeAllocations: (nodeId) => countActiveAllocations(q, nodeId),
    liveLeases: (nodeId) => countLiveLeases(q, nodeId, clock.now()),
    canaryProven: (kind, value) => isCanaryProven(q, kind, value),
  }
}
