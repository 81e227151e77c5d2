// The agent certificates the gateway issued: insert at enrollment and renewal, find
// by fingerprint on every mTLS request, revoke older ones on a renewed one's first use.
import type { Queryable } from '../database.js'

/** Issuance holds this advisory lock shared; CA rotation phases take it exclusively. */
export const ISSUANCE_LOCK_KEY = 7_020_865_312

export interface NodeCertificateRow {
  id: string
  nodeId: string
  fingerprintSha256: string
  serial: string
  notBefore: Date
  notAfter: Date
  issuerCaSha256: string
  purpose: string
  replacesId: string | null
  firstUsedAt: Date | null
  revokedAt: Date | null
  createdAt: Date
}

/** What issuance stores: the certificate's own facts; the row's bookkeeping columns are the store's. */
export type NewNodeCertificate = Pick<
  NodeCertificateRow,
  'nodeId' | 'fingerprintSha256' | 'serial' | 'notBefore' | 'notAfter' | 'issuerCaSha256'
> & {
  replacesId?: string | null
  now: Date
  /** Kept so a repeated enrollment can be answered with this same certificate (it is public). */
  certificatePem?: string
  /** SHA-256 of the subject public key (SPKI DER): what a repeated enrollment must match. */
  publicKeySha256?: Buffer
}

/** A certificate together with its node's current status: what agent authentication needs. */
export interface PresentedCertificate extends NodeCertificateRow {
  nodeStatus: string
}

const COLUMNS = `c.id::text AS id, c.node_id, c.fingerprint_sha256, c.serial, c.not_before, c.not_after, c.issuer_ca_sha256,
  c.purpose, c.replaces_id::text AS replaces_id, c.first_used_at, c.revoked_at, c.created_at`

interface Row {
  id: string
  node_id: string
  fingerprint_sha256: string
  serial: string
  not_before: Date
  not_after: Date
  issuer_ca_sha256: string
  purpose: string
  replaces_id: string | null
  first_used_at: Date | null
  revoked_at: Date | null
  created_at: Date
  node_status?: string
}

function toCertificate(row: Row): NodeCertificateRow {
  return {
    id: row.id,
    nodeId: row.node_id,
    fingerprintSha256: row.fingerprint_sha256,
    serial: row.serial,
    notBefore: row.not_before,
    notAfter: row.not_after,
    issuerCaSha256: row.issuer_ca_sha256,
    purpose: row.purpose,
    replacesId: row.replaces_id,
    firstUsedAt: row.first_used_at,
    revokedAt: row.revoked_at,
    createdAt: row.created_at,
  }
}

/** Wait for (and hold until the transaction ends) the shared issuance lock. Call inside a transaction. */
export async function takeIssuanceLockShared(q: Queryable): Promise<void> {
  await q.query('SELECT pg_advisory_xact_lock_shared($1)', [ISSUANCE_LOCK_KEY])
}

export async function insertNodeCertificate(q: Queryable, cert: NewNodeCertificate): Promise<NodeCertificateRow> {
  const { rows } = await q.query<Row>(
    `INSERT INTO node_certificates AS c (node_id, fingerprint_sha256, serial, not_before, not_after, issuer_ca_sha256, purpose, replaces_id, created_at, certificate_pem, public_key_sha256)
     VALUES ($1, $2, $3, $4, $5, $6, 'agent', $7, $8, $9, $10)
     RETURNING ${COLUMNS}`,
    [
      cert.nodeId,
      cert.fingerprintSha256,
      cert.serial,
      cert.notBefore,
      cert.notAfter,
      cert.issuerCaSha256,
      cert.replacesId ?? null,
      cert.now,
      cert.certificatePem ?? null,
      cert.publicKeySha256 ?? null,
    ],
  )
  return toCertificate(rows[0]!)
}

export async function findCertificateByFingerprint(
  q: Queryable,
  fingerprintSha256: string,
): Promise<PresentedCertificate | undefined> {
  return (await findCertificatesByFingerprints(q, [fingerprintSha256])).get(fingerprintSha256)
}

/**
 * The certificates agents may connect with now (not revoked, not expired, of a node in `statuses`),
 * `limit` at a time in fingerprint order after `afterFingerprint`: a starting gateway reads them
 * into its authentication cache, so a reconnect storm costs no query per agent.
 */
export async function listLiveCertificates(
  q: Queryable,
  statuses: readonly string[],
  afterFingerprint: string,
  limit: number,
): Promise<PresentedCertificate[]> {
  const { rows } = await q.query<Row>(
    `SELECT ${COLUMNS}, n.status AS node_status
       FROM node_certificates c JOIN nodes n ON n.id = c.node_id
      WHERE c.revoked_at IS NULL AND c.not_after > now() AND n.status = ANY($1::text[]) AND c.fingerprint_sha256 > $2
      ORDER BY c.fingerprint_sha256
      LIMIT $3`,
    [statuses, afterFingerprint, limit],
  )
  return rows.map((row) => ({ ...toCertificate(row), nodeStatus: row.node_status! }))
}

/** Many certificates with their nodes' status in one query (the gateway batches its authentication misses), by fingerprint. */
export async function findCertificatesByFingerprints(
  q: Queryable,
  fingerprints: readonly string[],
): Promise<Map<string, PresentedCertificate>> {
  if (fingerprints.length === 0) return new Map()
  const { rows } = await q.query<Row>(
    `SELECT ${COLUMNS}, n.status AS node_status
       FROM node_certificates c JOIN nodes n ON n.id = c.node_id
      WHERE c.fingerprint_sha256 = ANY($1::text[])`,
    [fingerprints],
  )
  return new Map(rows.map((row) => [row.fingerprint_sha256, { ...toCertificate(row), nodeStatus: row.node_status! }]))
}

export async function listNodeCertificates(q: Queryable, nodeId: string): Promise<NodeCertificateRow[]> {
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM node_certificates c WHERE c.node_id = $1 ORDER BY c.id`, [
    nodeId,
  ])
  return rows.map(toCertificate)
}

/**
 * Record the first use of a certificate and, in the same statement, revoke every older
 * unrevoked agent certificate of its node. Only the one request that sets first_used_at
 * revokes; concurrent first requests wait on the row lock and then see it set.
 */
export async function markFirstUseAndRevokeOlder(
  q: Queryable,
  certificateId: string,
  nodeId: string,
  now: Date,
): Promise<{ firstUse: boolean; revoked: number }> {
  const { rows } = await q.query<{ first: string; revoked: string }>(
    `WITH first AS (
       UPDATE node_certificates SET first_used_at = $3
        WHERE id = $1 AND node_id = $2 AND first_used_at IS NULL
       RETURNING id
     ), revoked AS (
       UPDATE node_certificates SET revoked_at = $3
        WHERE node_id = $2 AND id < $1 AND revoked_at IS NULL AND purpose = 'agent' AND EXISTS (SELECT 1 FROM first)
       RETURNING id
     )
     SELECT (SELECT count(*) FROM first) AS first, (SELECT count(*) FROM revoked) AS revoked`,
    [certificateId, nodeId, now],
  )
  return { firstUse: Number(rows[0]!.first) > 0, revoked: Number(rows[0]!.revoked) }
}

/** Revoke every unrevoked certificate of a node (a fresh enrollment, a decommission). */
export async function revokeNodeCertificates(q: Queryable, nodeId: string, now: Date): Promise<number> {
  const { rowCount } = await q.query(
    'UPDATE node_certificates SET revoked_at = $2 WHERE node_id = $1 AND revoked_at IS NULL',
    [nodeId, now],
  )
  return rowCount ?? 0
}

/** Unrevoked agent certificates of nodes that still connect, expiring between now and `before`. */
export async function countCertificatesExpiringBefore(q: Queryable, now: Date, before: Date): Promise<number> {
  const { rows } = await q.query<{ n: string }>(
    `SELECT count(*) AS n FROM node_certificates c JOIN nodes n ON n.id = c.node_id
      WHERE c.revoked_at IS NULL AND c.not_after > $1 AND c.not_after <= $2
        AND n.status IN ('active', 'unhealthy', 'draining')`,
    [now, before],
  )
  return Number(rows[0]!.n)
}

/** Whether the node was ever issued an agent certificate (it enrolled at least once). */
export async function hasAgentCertificate(q: Queryable, nodeId: string): Promise<boolean> {
  const { rows } = await q.query<{ found: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM node_certificates WHERE node_id = $1 AND purpose = 'agent') AS found`,
    [nodeId],
  )
  return rows[0]!.found
}

/**
 * The certificate an enrollment with this secret already issued, if the same public key asks
 * again while the secret is still within its lifetime: the agent's first answer was lost (a
 * gateway died after the commit). Only the enrollment's own certificate (created when the
 * secret was used), unrevoked, for a node that may still connect; anything else is undefined.
 */
export async function findEnrollmentReplay(
  q: Queryable,
  nodeId: string,
  secretSha256: Buffer,
  publicKeySha256: Buffer,
  now: Date,
): Promise<{ certificatePem: string; notAfter: Date } | undefined> {
  if (secretSha256.length !== 32 || publicKeySha256.length !== 32) return undefined
  const { rows } = await q.query<{ certificate_pem: string; not_after: Date }>(
    `SELECT c.certificate_pem, c.not_after
       FROM nodes n JOIN node_certificates c ON c.node_id = n.id
      WHERE n.id = $1 AND n.enrollment_secret_sha256 = $2
        AND n.enrollment_secret_used_at IS NOT NULL AND n.enrollment_secret_expires_at > $4
        AND n.status IN ('active', 'unhealthy', 'draining')
        AND c.created_at = n.enrollment_secret_used_at AND c.purpose = 'agent' AND c.replaces_id IS NULL
        AND c.public_key_sha256 = $3 AND c.revoked_at IS NULL AND c.not_after > $4 AND c.certificate_pem IS NOT NULL
      ORDER BY c.id DESC LIMIT 1`,
    [nodeId, secretSha256, publicKeySha256, now],
  )
  const row = rows[0]
  return row ? { certificatePem: row.certificate_pem, notAfter: row.not_after } : undefined
}
