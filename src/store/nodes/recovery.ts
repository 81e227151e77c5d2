// The state a recovery reads and changes: the node's recovery counter (each value used once)
// and which certificate is the node's latest.
import type { Queryable } from '../database.js'

/**
 * Node statuses that may recover by a signed challenge; retired and lost nodes never do. A parked node
 * does: its identity survives a power-off longer than a certificate lives (docs/operations.md, park).
 */
export const RECOVERABLE_STATUSES = ['active', 'unhealthy', 'draining', 'parked'] as const

/** The node's recovery counter, or undefined for an unknown node. */
export async function readRecoveryCounter(q: Queryable, nodeId: string): Promise<number | undefined> {
  const { rows } = await q.query<{ recovery_count: number }>('SELECT recovery_count FROM nodes WHERE id = $1', [nodeId])
  return rows[0]?.recovery_count
}

/**
 * Use the counter value a challenge carried: one UPDATE, so of two recoveries with one challenge
 * exactly one succeeds; only a recoverable node; last_seen_at set (it is back).
 */
export async function consumeRecoveryCounter(
  q: Queryable,
  nodeId: string,
  expected: number,
  now: Date,
): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE nodes SET recovery_count = recovery_count + 1, last_seen_at = $3
      WHERE id = $1 AND recovery_count = $2 AND status = ANY($4::text[])`,
    [nodeId, expected, now, RECOVERABLE_STATUSES],
  )
  return (rowCount ?? 0) > 0
}

/** The id of the node's newest agent certificate (the only one a recovery may present). */
export async function latestAgentCertificateId(q: Queryable, nodeId: string): Promise<string | undefined> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT max(id)::text AS id FROM node_certificates WHERE node_id = $1 AND purpose = 'agent'`,
    [nodeId],
  )
  return rows[0]?.id ?? undefined
}
