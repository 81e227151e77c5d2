// How agent authentication reads certificate rows: the misses of many connections at once (a
// reconnect storm) in one query; a row read while an eviction happened (its revocation may have been
// announced before the row arrived) serves its request but is not cached; and the warm-up that reads
// every live row a page at a time when the gateway starts listening.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import type { TLSSocket } from 'node:tls'

import { AgentAuthenticator, peerFingerprint } from '../../../src/gateway/auth/agent-auth.js'
import type { Queryable } from '../../../src/store/database.js'

const NOW = new Date('2026-12-01T12:00:00Z')

/** A socket that completed mTLS with a certificate whose DER is `der` (the fingerprint is its SHA-256, as OpenSSL prints it). */
const socket = (der: string) =>
  ({
    authorized: true,
    getPeerX509Certificate: () => ({
      fingerprint256: (createHash('sha256').update(der).digest('hex').toUpperCase().match(/../g) ?? []).join(':'),
    }),
  }) as unknown as TLSSocket

function dbRow(fingerprint: string, nodeId: string) {
  return {
    id: '1',
    node_id: nodeId,
    fingerprint_sha256: fingerprint,
    serial: '01',
    not_before: new Date(0),
    not_after: new Date('2027-01-01T00:00:00Z'),
    issuer_ca_sha256: 'c'.repeat(64),
    purpose: 'agent',
    replaces_id: null,
    first_used_at: new Date(0),
    revoked_at: null,
    created_at: new Date(0),
    node_status: 'active',
  }
}

/**
 * A database of one certificate per node; each query may run something while it is out. It answers the
 * look-up by fingerprints and the warm-up's page (fingerprints after the second parameter, a limit).
 */
function database(nodes: string[], duringQuery: () => void = () => undefined) {
  const rows = new Map(nodes.map((n) => [peerFingerprint(socket(n))!, n]))
  const queries: string[][] = []
  const pages: { after: string; limit: number }[] = []
  const pool = {
    query: async (sql: string, params: unknown[]) => {
      await new Promise((resolve) => setImmediate(resolve))
      duringQuery()
      if (/LIMIT/.test(sql)) {
        const [, after, limit] = params as [string[], string, number]
        pages.push({ after, limit })
        const page = [...rows.keys()]
          .sort()
          .filter((f) => f > after)
          .slice(0, limit)
        return { rows: page.map((f) => dbRow(f, rows.get(f)!)) }
      }
      const [fingerprints] = params as [string[]]
      queries.push(fingerprints)
      return { rows: fingerprints.filter((f) => rows.has(f)).map((f) => dbRow(f, rows.get(f)!)) }
    },
  } as unknown as Queryable
  return { pool, queries, pages }
}

describe('gateway: how agent authentication reads certificate rows', () => {
  it('200 connections presenting certificates at once cost one query, and later requests none', async () => {
    const nodes = Array.from({ length: 200 }, (_, i) => `node-${i}`)
    const { pool, queries } = database(nodes)
    const auth = new AgentAuthenticator({ pool, cacheMs: 60_000 })
    const identities = await Promise.all(nodes.map((n) => auth.authenticate(socket(n), NOW, true)))
    assert.deepEqual(
      identities.map((i) => i.nodeId),
      nodes,
    )
    assert.equal(queries.length, 1)
    assert.equal(queries[0]!.length, 200)
    await Promise.all(nodes.map((n) => auth.authenticate(socket(n), NOW, true)))
    assert.equal(queries.length, 1)
  })

  it('refuses an unknown certificate in the same batch as known ones', async () => {
    const { pool, queries } = database(['node-a'])
    const auth = new AgentAuthenticator({ pool, cacheMs: 60_000 })
    const [known, unknown] = await Promise.allSettled([
      auth.authenticate(socket('node-a'), NOW, false),
      auth.authenticate(socket('stranger'), NOW, false),
    ])
    assert.equal(known.status === 'fulfilled' && known.value.nodeId, 'node-a')
    assert.equal(unknown.status === 'rejected' && (unknown.reason as { code: string }).code, 'CERTIFICATE_REFUSED')
    assert.equal(queries.length, 1)
  })

  it('does not cache a row read while a node was evicted (an announcement may have come before the row)', async () => {
    const evicting: { auth?: AgentAuthenticator } = {}
    const { pool, queries } = database(['node-a'], () => evicting.auth!.evictNode('node-a'))
    const auth = new AgentAuthenticator({ pool, cacheMs: 60_000 })
    evicting.auth = auth
    assert.equal((await auth.authenticate(socket('node-a'), NOW, false)).nodeId, 'node-a')
    assert.equal(auth.peek(peerFingerprint(socket('node-a'))!), undefined)
    await auth.authenticate(socket('node-a'), NOW, false)
    assert.equal(queries.length, 2)
  })

  it('warm-up reads every live row a page at a time, and then no request reads', async () => {
    const nodes = Array.from({ length: 1203 }, (_, i) => `node-${i}`)
    const { pool, queries, pages } = database(nodes)
    const auth = new AgentAuthenticator({ pool, cacheMs: 60_000 })
    assert.equal(await auth.warm(), 1203)
    assert.deepEqual(
      pages.map((p) => p.limit),
      [500, 500, 500],
    )
    assert.equal(pages[1]!.after, [...new Set(nodes.map((n) => peerFingerprint(socket(n))!))].sort()[499])
    await Promise.all(nodes.map((n) => auth.authenticate(socket(n), NOW, true)))
    assert.equal(queries.length, 0)
  })

  it('warm-up stops at its row limit, and keeps no page read while an eviction happened', async () => {
    const nodes = Array.from({ length: 30 }, (_, i) => `node-${i}`)
    assert.equal(await new AgentAuthenticator({ pool: database(nodes).pool, cacheMs: 60_000 }).warm(10), 10)
    const evicting: { auth?: AgentAuthenticator } = {}
    const { pool } = database(nodes, () => evicting.auth!.evictNode('node-0'))
    const auth = new AgentAuthenticator({ pool, cacheMs: 60_000 })
    evicting.auth = auth
    assert.equal(await auth.warm(), 0)
    assert.deepEqual(auth.cachedFingerprints(), [])
  })
})
