// `fleetkit ca operator-revoke NAME` and `ca operator-list`: an operator certificate stops opening
// the operator API at once (the gateway looks each request's fingerprint up in the state), and
// the revocation is an event naming who did it.
import type { StatePool } from '../../store/transaction.js'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { withTransaction } from '../../store/database.js'
import { appendEvent } from '../../store/events.js'
import {
  listOperatorCertificates,
  type OperatorCertificateRow,
  revokeOperatorCertificates,
} from '../../store/pki/operator-certificates.js'
import { checkOperatorName } from './operator-cert.js'

interface OperatorCertificateView {
  name: string
  /** @pattern ^[0-9a-f]{1,40}$ */
  serial: string
  /** @pattern ^[0-9a-f]{64}$ */
  fingerprintSha256: string
  /** @format date-time */
  notAfter: string
  /** @format date-time */
  revokedAt: string | null
  status: 'live' | 'revoked' | 'expired'
}

export interface OperatorRevokeResult {
  revoked: OperatorCertificateView[]
}

export interface OperatorListResult {
  certificates: OperatorCertificateView[]
}

function view(row: OperatorCertificateRow, now: Date): OperatorCertificateView {
  return {
    name: row.name,
    serial: row.serial,
    fingerprintSha256: row.fingerprintSha256,
    notAfter: row.notAfter.toISOString(),
    revokedAt: row.revokedAt?.toISOString() ?? null,
    status: row.revokedAt ? 'revoked' : row.notAfter.getTime() <= now.getTime() ? 'expired' : 'live',
  }
}

const SERIAL = /^[0-9a-f]{1,40}$/

export async function revokeOperatorCertificate(options: {
  pool: StatePool
  name: string
  serial?: string
  actor: string
  now: Date
}): Promise<OperatorRevokeResult> {
  const { name, serial } = options
  checkOperatorName(name, `fleetkit ca operator-revoke alice`)
  if (serial !== undefined && !SERIAL.test(serial)) {
    throw new FleetkitError('USAGE_INVALID', '--serial takes a certificate serial in lowercase hex (up to 40 digits)', {
      actions: ['fleetkit ca operator-list'],
    })
  }
  const revoked = await withTransaction(options.pool, async (client) => {
    const rows = await revokeOperatorCertificates(client, name, serial)
    for (const row of rows) {
      await appendEvent(client, {
        kind: 'operator_certificate_revoked',
        data: { name, serial: row.serial, actor: options.actor },
      })
    }
    return rows
  })
  if (revoked.length === 0) {
    throw new FleetkitError(
      'OPERATOR_CERT_UNKNOWN',
      `no live operator certificate of ${name}${serial ? ` with serial ${serial}` : ''}: never issued, expired or already revoked; nothing changed`,
      { actions: ['fleetkit ca operator-list'], data: { name, serial: serial ?? null } },
    )
  }
  return { revoked: revoked.map((r) => view(r, options.now)) }
}

export async function listOperators(options: {
  pool: StatePool
  name?: string
  now: Date
}): Promise<OperatorListResult> {
  if (options.name !== undefined) checkOperatorName(options.name, 'fleetkit ca operator-list --name alice')
  const rows = await listOperatorCertificates(options.pool, options.name === undefined ? {} : { name: options.name })
  return { certificates: rows.map((r) => view(r, options.now)) }
}
