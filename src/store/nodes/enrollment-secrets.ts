// Enrollment secrets of the nodes table: only the SHA-256 of a single-use secret is stored;
// one conditional UPDATE consumes it, so of concurrent attempts with one secret exactly one wins.
// A secret reissued on purpose to an enrolled node leaves its status and certificates alone.
import type { Queryable } from '../database.js'
import { NODE_COLUMNS, type NodeRow, toNode } from './nodes.js'

/**
 * Store the SHA-256 of a new enrollment secret (replacing any previous one), clear its
 * used mark and set the node `provisioning`. Returns the node, or undefined if it does not exist.
 */
export async function issueEnrollmentSecret(
  q: Queryable,
  nodeId: string,
  secretSha256: Buffer,
  expiresAt: Date,
): Promise<NodeRow | undefined> {
  assertSha256(secretSha256)
  const result = await q.query(
    `UPDATE nodes SET enrollment_secret_sha256 = $2, enrollment_secret_expires_at = $3, enrollment_secret_used_at = NULL,
       enrollment_secret_issued_at = clock_timestamp(), status = 'provisioning', schedulable = false, updated_at = now()
     WHERE id = $1
     RETURNING ${NODE_COLUMNS}`,
    [nodeId, secretSha256, expiresAt],
  )
  return result.rows[0] ? toNode(result.rows[0] as Record<string, unknown>) : undefined
}

/**
 * Consume an enrollment secret in ONE conditional UPDATE: the hash matches, it is unused and
 * unexpired at `now`, and the node is `provisioning` (or enrolled with a secret reissued on
 * purpose: reissueEnrollmentSecret). The node becomes `active` (a draining node stays draining)
 * with last_seen_at = the database's now() (and provision_state `enrolled` if it was being provisioned).
 * True iff this call consumed it: of concurrent attempts with one secret, exactly one wins.
 */
export async function consumeEnrollmentSecret(
  q: Queryable,
  nodeId: string,
  secretSha256: Buffer,
  now: Date,
): Promise<boolean> {
  if (secretSha256.length !== 32) return false
  const result = await q.query(
    `UPDATE nodes SET status = CASE WHEN status = 'draining' THEN status ELSE 'active' END,
       -- Silence is judged on the database's clock (the sweep), whatever the gateway's clock says.
       last_seen_at = now(), enrollment_secret_used_at = $3, enrollment_secret_reissued = false,
       provision_state = CASE WHEN provision_state IS NULL THEN NULL ELSE 'enrolled' END,
       lost_at = NULL, updated_at = now()
     WHERE id = $1
       AND (status = 'provisioning' OR (enrollment_secret_reissued AND status IN ('active', 'unhealthy', 'draining', 'lost')))
       AND enrollment_secret_sha256 = $2
       AND enrollment_secret_used_at IS NULL
       AND enrollment_secret_expires_at > $3`,
    [nodeId, secretSha256, now],
  )
  return result.rowCount === 1
}

/**
 * Whether one of `hashes` is node `nodeId`'s pending secret (stored, unused, unexpired at `now`): how
 * a seed a killed run staged is told to be the one the state took, without reading the hash back.
 */
export async function isPendingSecret(q: Queryable, nodeId: string, hashes: Buffer[], now: Date): Promise<boolean> {
  if (hashes.length === 0) return false
  const { rowCount } = await q.query(
    `SELECT 1 FROM nodes
      WHERE id = $1 AND enrollment_secret_sha256 = ANY($2::bytea[])
        AND enrollment_secret_used_at IS NULL AND enrollment_secret_expires_at > $3`,
    [nodeId, hashes, now],
  )
  return rowCount === 1
}

export interface NodeSecretState {
  status: string
  hostKeyPublic: string | null
  /** The pending secret's expiry and use (the hash itself is never read back). */
  secretExpiresAt: Date | null
  secretUsedAt: Date | null
  /** When the pending secret was stored, on the database's clock (null: before migration 0014, or none). */
  secretIssuedAt: Date | null
  /** The step of the node's `node provision` run (null: never provisioned by fleetkit). */
  provisionState: string | null
}

/** The advisory lock space of a node's secret and host key (two-int form: 'fk' 's'), apart from every bigint key. */
const SECRET_LOCK_CLASS = 0x666b73

/**
 * The node's status and pinned host key, with its row locked until the transaction ends
 * (FOR UPDATE), so the decision taken on them holds when the change commits. A node not in the
 * state has no row to lock, so a transaction-scoped advisory lock on its id comes first: of
 * concurrent runs for one node, each waits for the one before to commit, then reads what it wrote.
 */
export async function lockNodeSecretState(q: Queryable, nodeId: string): Promise<NodeSecretState | undefined> {
  await q.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [SECRET_LOCK_CLASS, nodeId])
  const result = await q.query<{
    status: string
    host_key_public: string | null
    enrollment_secret_expires_at: Date | null
    enrollment_secret_used_at: Date | null
    enrollment_secret_issued_at: Date | null
    provision_state: string | null
  }>(
    `SELECT status, host_key_public, enrollment_secret_expires_at, enrollment_secret_used_at, enrollment_secret_issued_at,
            provision_state
       FROM nodes WHERE id = $1 FOR UPDATE`,
    [nodeId],
  )
  const row = result.rows[0]
  return row
    ? {
        status: row.status,
        hostKeyPublic: row.host_key_public,
        secretExpiresAt: row.enrollment_secret_expires_at,
        secretUsedAt: row.enrollment_secret_used_at,
        secretIssuedAt: row.enrollment_secret_issued_at,
        provisionState: row.provision_state,
      }
    : undefined
}

/**
 * `at`, a time on the caller's clock (when its command started), moved onto the DATABASE's clock by the
 * offset between the two measured now (`localNow`: the caller's clock just before this statement), as
 * recordHeartbeats does: a secret's issue time is compared with it, and an operator's clock may be off.
 */
export async function onDatabaseClock(q: Queryable, at: Date, localNow: Date): Promise<Date> {
  const { rows } = await q.query<{ at: Date }>('SELECT $1::timestamptz + (clock_timestamp() - $2::timestamptz) AS at', [
    at,
    localNow,
  ])
  return rows[0]!.at
}

/**
 * Store the SHA-256 of a reissued secret for a node that is enrolled (active, unhealthy,
 * draining or lost) WITHOUT touching its status: the agent keeps authenticating with its
 * current certificate until the new secret is used, and that enrollment revokes it.
 * True iff the node exists.
 */
export async function reissueEnrollmentSecret(
  q: Queryable,
  nodeId: string,
  secretSha256: Buffer,
  expiresAt: Date,
): Promise<boolean> {
  assertSha256(secretSha256)
  const result = await q.query(
    `UPDATE nodes SET enrollment_secret_sha256 = $2, enrollment_secret_expires_at = $3, enrollment_secret_used_at = NULL,
       enrollment_secret_issued_at = clock_timestamp(), enrollment_secret_reissued = true, updated_at = now()
     WHERE id = $1`,
    [nodeId, secretSha256, expiresAt],
  )
  return result.rowCount === 1
}

/** A secret issued the ordinary way (the node is provisioning) is no reissue: clear the mark. */
export async function clearSecretReissued(q: Queryable, nodeId: string): Promise<void> {
  await q.query('UPDATE nodes SET enrollment_secret_reissued = false WHERE id = $1 AND enrollment_secret_reissued', [
    nodeId,
  ])
}

function assertSha256(hash: Buffer): void {
  if (!Buffer.isBuffer(hash) || hash.length !== 32)
    throw new RangeError('an enrollment secret hash is a 32-byte SHA-256 digest')
}
