// What seeding reads and writes under the node's row lock: its status and pinned host key,
// and a reissued enrollment secret that leaves an enrolled node's status and certificates alone.
import type { Queryable } from './database.js'

export interface NodeSecretState {
  status: string
  hostKeyPublic: string | null
}

/**
 * The node's status and pinned host key, with its row locked until the transaction ends
 * (FOR UPDATE), so the decision taken on them holds when the change commits.
 */
export async function lockNodeSecretState(q: Queryable, nodeId: string): Promise<NodeSecretState | undefined> {
  const result = await q.query<{ status: string; host_key_public: string | null }>(
    'SELECT status, host_key_public FROM nodes WHERE id = $1 FOR UPDATE',
    [nodeId],
  )
  const row = result.rows[0]
  return row ? { status: row.status, hostKeyPublic: row.host_key_public } : undefined
}

/**
 * Store the SHA-256 of a reissued secret for a node that is enrolled (active, unhealthy,
 * draining or lost) WITHOUT touching its status: the agent keeps authenticating with its
 * current certificate until the new secret is used, and that enrollment revokes it.
 * True iff the node exists.
 */
export async function reissueEnrollmentSecret(q: Queryable, nodeId: string, secretSha256: Buffer, expiresAt: Date): Promise<boolean> {
  if (!Buffer.isBuffer(secretSha256) || secretSha256.length !== 32) throw new RangeError('an enrollment secret hash is a 32-byte SHA-256 digest')
  const result = await q.query(
    `UPDATE nodes SET enrollment_secret_sha256 = $2, enrollment_secret_expires_at = $3, enrollment_secret_used_at = NULL,
       enrollment_secret_reissued = true, updated_at = now()
     WHERE id = $1`,
    [nodeId, secretSha256, expiresAt],
  )
  return result.rowCount === 1
}

/** A secret issued the ordinary way (the node is provisioning) is no reissue: clear the mark. */
export async function clearSecretReissued(q: Queryable, nodeId: string): Promise<void> {
  await q.query('UPDATE nodes SET enrollment_secret_reissued = false WHERE id = $1 AND enrollment_secret_reissued', [nodeId])
}
