// Enrollment secrets of the nodes table: only the SHA-256 of a single-use secret is stored;
// one conditional UPDATE consumes it, so of concurrent attempts with one secret exactly one wins.
import type { Queryable } from './database.js'
import { NODE_COLUMNS, type NodeRow, toNode } from './nodes.js'

/**
 * Store the SHA-256 of a new enrollment secret (replacing any previous one), clear its
 * used mark and set the node `provisioning`. Returns the node, or undefined if it does not exist.
 */
export async function issueEnrollmentSecret(q: Queryable, nodeId: string, secretSha256: Buffer, expiresAt: Date): Promise<NodeRow | undefined> {
  assertSha256(secretSha256)
  const result = await q.query(
    `UPDATE nodes SET enrollment_secret_sha256 = $2, enrollment_secret_expires_at = $3, enrollment_secret_used_at = NULL,
       status = 'provisioning', schedulable = false, updated_at = now()
     WHERE id = $1
     RETURNING ${NODE_COLUMNS}`,
    [nodeId, secretSha256, expiresAt],
  )
  return result.rows[0] ? toNode(result.rows[0] as Record<string, unknown>) : undefined
}

/**
 * Consume an enrollment secret in ONE conditional UPDATE: the hash matches, it is unused and
 * unexpired at `now`, and the node is `provisioning`. The node becomes `active` with
 * last_seen_at = now (and provision_state `enrolled` if it was being provisioned).
 * True iff this call consumed it: of concurrent attempts with one secret, exactly one wins.
 */
export async function consumeEnrollmentSecret(q: Queryable, nodeId: string, secretSha256: Buffer, now: Date): Promise<boolean> {
  if (secretSha256.length !== 32) return false
  const result = await q.query(
    `UPDATE nodes SET status = 'active', last_seen_at = $3, enrollment_secret_used_at = $3,
       provision_state = CASE WHEN provision_state IS NULL THEN NULL ELSE 'enrolled' END,
       lost_at = NULL, updated_at = now()
     WHERE id = $1 AND status = 'provisioning'
       AND enrollment_secret_sha256 = $2
       AND enrollment_secret_used_at IS NULL
       AND enrollment_secret_expires_at > $3`,
    [nodeId, secretSha256, now],
  )
  return result.rowCount === 1
}

function assertSha256(hash: Buffer): void {
  if (!Buffer.isBuffer(hash) || hash.length !== 32) throw new RangeError('an enrollment secret hash is a 32-byte SHA-256 digest')
}
