// The fleetkit_auth channel (migration 0006): PostgreSQL announces the node id whose certificate
// was revoked or whose status changed; every gateway listens on its own connection and drops the
// node's cached certificate rows. Also the bulk re-read its periodic safety-net check uses.
import type pg from 'pg'

import type { Queryable } from '../database.js'

const AUTH_CHANNEL = 'fleetkit_auth'

export interface AuthListener {
  close(): Promise<void>
}

/**
 * LISTEN on a connection of its own (outside the pool). `onNode` gets each announced node id;
 * `onLost` is called once when the connection fails (announcements may have been missed since).
 */
export async function listenForAuthChanges(
  pool: pg.Pool,
  onNode: (nodeId: string) => void,
  onLost: (error: Error) => void,
): Promise<AuthListener> {
  const { default: pgModule } = await import('pg')
  const options = pool.options as pg.ClientConfig
  // pg-pool keeps the password out of a spread (non-enumerable): name it.
  const client = new pgModule.Client({
    ...options,
    password: options.password,
    connectionTimeoutMillis: 5000,
    keepAlive: true,
  })
  let closing = false
  let lost = false
  const lose = (error: Error) => {
    if (closing || lost) return
    lost = true
    onLost(error)
  }
  client.on('notification', (message) => {
    if (message.channel === AUTH_CHANNEL && message.payload) onNode(message.payload)
  })
  client.on('error', lose)
  client.on('end', () => lose(new Error('the notification connection ended')))
  try {
    await client.connect()
    await client.query(`LISTEN ${AUTH_CHANNEL}`)
  } catch (error) {
    closing = true
    await client.end().catch(() => undefined)
    throw error
  }
  return {
    close: async () => {
      closing = true
      await client.end().catch(() => undefined)
    },
  }
}

export interface CertificateAuthState {
  fingerprintSha256: string
  revokedAt: Date | null
  notAfter: Date
  nodeStatus: string
}

/** The parts of certificate rows authentication depends on, for many fingerprints at once. */
export async function readCertificateAuthStates(q: Queryable, fingerprints: string[]): Promise<CertificateAuthState[]> {
  if (fingerprints.length === 0) return []
  const { rows } = await q.query<{
    fingerprint_sha256: string
    revoked_at: Date | null
    not_after: Date
    node_status: string
  }>(
    `SELECT c.fingerprint_sha256, c.revoked_at, c.not_after, n.status AS node_status
       FROM node_certificates c JOIN nodes n ON n.id = c.node_id
      WHERE c.fingerprint_sha256 = ANY($1::text[])`,
    [fingerprints],
  )
  return rows.map((r) => ({
    fingerprintSha256: r.fingerprint_sha256,
    revokedAt: r.revoked_at,
    notAfter: r.not_after,
    nodeStatus: r.node_status,
  }))
}
