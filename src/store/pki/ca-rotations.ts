// CA rotations in the state: the rotation row and its phases, the exclusive side of the issuance
// lock, and the certificate questions rotation asks (who has renewed, who would be cut off).
import type { Queryable } from '../database.js'
import { ISSUANCE_LOCK_KEY } from './certificates.js'

type RotationStatus = 'begun' | 'completed' | 'aborted'

export interface CaRotationRow {
  id: string
  oldCaSha256: string
  newCaSha256: string
  status: RotationStatus
  begunAt: Date
  finishedAt: Date | null
}

/** Node statuses whose agents must hold a new-CA certificate before a rotation completes. */
const ROTATION_BLOCKING_STATUSES = ['active', 'unhealthy', 'draining'] as const

interface Row {
  id: string
  old_ca_sha256: string
  new_ca_sha256: string
  status: RotationStatus
  begun_at: Date
  finished_at: Date | null
}

const COLUMNS = 'id::text AS id, old_ca_sha256, new_ca_sha256, status, begun_at, finished_at'

function toRotation(row: Row): CaRotationRow {
  return {
    id: row.id,
    oldCaSha256: row.old_ca_sha256,
    newCaSha256: row.new_ca_sha256,
    status: row.status,
    begunAt: row.begun_at,
    finishedAt: row.finished_at,
  }
}

/** Wait for every issuance in flight to commit, and hold issuance off until the transaction ends. */
export async function takeIssuanceLockExclusive(q: Queryable): Promise<void> {
  await q.query('SELECT pg_advisory_xact_lock($1)', [ISSUANCE_LOCK_KEY])
}

/** The latest rotation (open or not), or undefined when the CA was never rotated. */
export async function latestRotation(q: Queryable): Promise<CaRotationRow | undefined> {
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM ca_rotations ORDER BY ca_rotations.id DESC LIMIT 1`)
  return rows[0] ? toRotation(rows[0]) : undefined
}

export async function insertRotation(
  q: Queryable,
  rotation: { oldCaSha256: string; newCaSha256: string; now: Date },
): Promise<CaRotationRow> {
  const { rows } = await q.query<Row>(
    `INSERT INTO ca_rotations (old_ca_sha256, new_ca_sha256, status, begun_at) VALUES ($1, $2, 'begun', $3) RETURNING ${COLUMNS}`,
    [rotation.oldCaSha256, rotation.newCaSha256, rotation.now],
  )
  return toRotation(rows[0]!)
}

/** Close the open rotation; false when it was not open any more. */
export async function finishRotation(
  q: Queryable,
  id: string,
  status: 'completed' | 'aborted',
  now: Date,
): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE ca_rotations SET status = $2, finished_at = $3 WHERE id = $1 AND status = 'begun'`,
    [id, status, now],
  )
  return (rowCount ?? 0) > 0
}

/**
 * Whether a gateway may issue from this CA: not the new CA of an aborted rotation, nor the old
 * CA of a completed one (a gateway that has not reloaded yet still holds those in memory).
 */
export async function issuingCaRetired(q: Queryable, caSha256: string): Promise<boolean> {
  const { rows } = await q.query<{ retired: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM ca_rotations
                     WHERE (new_ca_sha256 = $1 AND status = 'aborted') OR (old_ca_sha256 = $1 AND status = 'completed')) AS retired`,
    [caSha256],
  )
  return rows[0]!.retired
}

/**
 * The nodes that moved onto a CA: the gateway saw each authenticate with a live (unrevoked, unexpired)
 * certificate it issued, which revoked the node's older ones. Abort would cut exactly these off; a
 * certificate issued but never used (its renewal answer was lost) moves nobody.
 */
export async function nodesUsingCertificatesFrom(q: Queryable, caSha256: string, now: Date): Promise<string[]> {
  const { rows } = await q.query<{ node_id: string }>(
    `SELECT DISTINCT node_id FROM node_certificates
      WHERE issuer_ca_sha256 = $1 AND first_used_at IS NOT NULL AND revoked_at IS NULL AND not_after > $2
      ORDER BY node_id`,
    [caSha256, now],
  )
  return rows.map((r) => r.node_id)
}

/** Revoke the CA's certificates no agent ever used (an abort: none may be presented while a gateway still trusts it). */
export async function revokeUnusedCertificatesFrom(q: Queryable, caSha256: string, now: Date): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE node_certificates SET revoked_at = $2 WHERE issuer_ca_sha256 = $1 AND first_used_at IS NULL AND revoked_at IS NULL`,
    [caSha256, now],
  )
  return rowCount ?? 0
}

export interface NodeOnOldCa {
  nodeId: string
  status: string
  /** The latest unrevoked, unexpired certificate's expiry, when it has one. */
  notAfter: Date | null
  /**
   * A new-CA certificate was issued to it but its agent never authenticated with it (the renewal's answer
   * was lost): the agent still uses its old one, and renews again at its next check.
   */
  unusedNewCertificate: boolean
}

export interface RotationProgress {
  /** Nodes that connect (active, unhealthy, draining). */
  connected: number
  /** Of those, how many moved: the gateway saw them authenticate with a live new-CA certificate. */
  renewed: number
  /** Connected nodes without one: --complete is refused while any is left. */
  blocking: NodeOnOldCa[]
  /** Other nodes (lost, parked, ...) whose live certificates are all from another CA: completion cuts them off. */
  cutOff: NodeOnOldCa[]
}

/**
 * Where the fleet stands on the way to the new CA, at `now`. A node counts as moved only once the gateway
 * saw it authenticate with a new-CA certificate (first_used_at, set on the first request presenting it): a
 * certificate issued but never used proves nothing, and completion would revoke the one its agent still uses.
 */
export async function rotationProgress(q: Queryable, newCaSha256: string, now: Date): Promise<RotationProgress> {
  const { rows } = await q.query<{
    id: string
    status: string
    renewed: boolean
    unused_new: boolean
    connected: boolean
    not_after: Date | null
    live_old: boolean
  }>(
    `SELECT n.id, n.status,
            n.status = ANY($3::text[]) AS connected,
            EXISTS (SELECT 1 FROM node_certificates c WHERE c.node_id = n.id AND c.issuer_ca_sha256 = $1
                       AND c.revoked_at IS NULL AND c.not_after > $2 AND c.first_used_at IS NOT NULL) AS renewed,
            EXISTS (SELECT 1 FROM node_certificates c WHERE c.node_id = n.id AND c.issuer_ca_sha256 = $1
                       AND c.revoked_at IS NULL AND c.not_after > $2 AND c.first_used_at IS NULL) AS unused_new,
            EXISTS (SELECT 1 FROM node_certificates c WHERE c.node_id = n.id AND c.issuer_ca_sha256 <> $1
                       AND c.revoked_at IS NULL AND c.not_after > $2) AS live_old,
            (SELECT max(c.not_after) FROM node_certificates c WHERE c.node_id = n.id AND c.revoked_at IS NULL AND c.not_after > $2) AS not_after
       FROM nodes n
      WHERE n.status = ANY($3::text[])
         OR EXISTS (SELECT 1 FROM node_certificates c WHERE c.node_id = n.id AND c.revoked_at IS NULL AND c.not_after > $2)
      ORDER BY n.id`,
    [newCaSha256, now, ROTATION_BLOCKING_STATUSES],
  )
  const progress: RotationProgress = { connected: 0, renewed: 0, blocking: [], cutOff: [] }
  for (const row of rows) {
    const node = {
      nodeId: row.id,
      status: row.status,
      notAfter: row.not_after,
      unusedNewCertificate: row.unused_new && !row.renewed,
    }
    if (row.connected) {
      progress.connected++
      if (row.renewed) progress.renewed++
      else progress.blocking.push(node)
    } else if (row.live_old && !row.renewed) {
      progress.cutOff.push(node)
    }
  }
  return progress
}

/** Revoke every unrevoked agent certificate not issued by the new CA (completion). */
export async function revokeCertificatesNotFrom(q: Queryable, newCaSha256: string, now: Date): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE node_certificates SET revoked_at = $2 WHERE revoked_at IS NULL AND issuer_ca_sha256 <> $1 AND purpose = 'agent'`,
    [newCaSha256, now],
  )
  return rowCount ?? 0
}

/** The CAs that issued a certificate still in use (unrevoked, unexpired): a trust bundle must keep every one. */
export async function liveIssuerFingerprints(q: Queryable, now: Date): Promise<string[]> {
  const { rows } = await q.query<{ issuer_ca_sha256: string }>(
    'SELECT DISTINCT issuer_ca_sha256 FROM node_certificates WHERE revoked_at IS NULL AND not_after > $1 ORDER BY 1',
    [now],
  )
  return rows.map((r) => r.issuer_ca_sha256)
}
