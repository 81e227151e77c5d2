// Operator client certificates (`fleetkit ca operator-cert`): stored by fingerprint so the
// operator API can refuse a revoked or unknown one.
import type { Queryable } from '../database.js'

export interface OperatorCertificateRow {
  id: string
  name: string
  fingerprintSha256: string
  serial: string
  notBefore: Date
  notAfter: Date
  revokedAt: Date | null
}

type Raw = Record<string, unknown>

function toRow(r: Raw): OperatorCertificateRow {
  return {
    id: String(r.id),
    name: r.name as string,
    fingerprintSha256: r.fingerprint_sha256 as string,
    serial: r.serial as string,
    notBefore: r.not_before as Date,
    notAfter: r.not_after as Date,
    revokedAt: (r.revoked_at as Date | null) ?? null,
  }
}

export async function insertOperatorCertificate(
  q: Queryable,
  c: { name: string; fingerprintSha256: string; serial: string; notBefore: Date; notAfter: Date },
): Promise<OperatorCertificateRow> {
  const { rows } = await q.query<Raw>(
    `INSERT INTO operator_certificates (name, fingerprint_sha256, serial, not_before, not_after) VALUES ($1, $2, $3, $4, $5)
     RETURNING id, name, fingerprint_sha256, serial, not_before, not_after, revoked_at`,
    [c.name, c.fingerprintSha256, c.serial, c.notBefore, c.notAfter],
  )
  return toRow(rows[0]!)
}

/** The unrevoked, unexpired (database clock) operator certificate with this fingerprint. */
export async function findLiveOperatorCertificate(
  q: Queryable,
  fingerprintSha256: string,
): Promise<OperatorCertificateRow | undefined> {
  const { rows } = await q.query<Raw>(
    `SELECT id, name, fingerprint_sha256, serial, not_before, not_after, revoked_at FROM operator_certificates
      WHERE fingerprint_sha256 = $1 AND revoked_at IS NULL AND not_after > now()`,
    [fingerprintSha256],
  )
  return rows[0] ? toRow(rows[0]) : undefined
}

const COLUMNS = 'id, name, fingerprint_sha256, serial, not_before, not_after, revoked_at'

/** Every operator certificate, newest first; with `live`, only the unrevoked, unexpired ones (database clock). */
export async function listOperatorCertificates(
  q: Queryable,
  filter: { name?: string; live?: boolean } = {},
): Promise<OperatorCertificateRow[]> {
  const { rows } = await q.query<Raw>(
    `SELECT ${COLUMNS} FROM operator_certificates
      WHERE ($1::text IS NULL OR name = $1) AND (NOT $2 OR (revoked_at IS NULL AND not_after > now()))
      ORDER BY id DESC`,
    [filter.name ?? null, filter.live ?? false],
  )
  return rows.map(toRow)
}

/** Revokes NAME's live certificates (only the one of `serial`, when given); the rows it revoked. */
export async function revokeOperatorCertificates(
  q: Queryable,
  name: string,
  serial?: string,
): Promise<OperatorCertificateRow[]> {
  const { rows } = await q.query<Raw>(
    `UPDATE operator_certificates SET revoked_at = now()
      WHERE name = $1 AND ($2::text IS NULL OR serial = $2) AND revoked_at IS NULL AND not_after > now()
      RETURNING ${COLUMNS}`,
    [name, serial ?? null],
  )
  return rows.map(toRow)
}
