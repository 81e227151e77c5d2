// The periodic re-check of cached certificate rows: a row changed in the database without an
// announcement is dropped and warned about; a row an announcement dropped (or that was read again)
// while the re-check's read was out is not counted as a change nobody announced.
import assert from 'node:assert/strict'

import type pg from 'pg'

import type { AgentAuthenticator } from '../../../src/gateway/auth/agent-auth.js'
import { AuthCacheKeeper } from '../../../src/gateway/auth/auth-cache.js'
import type { PresentedCertificate } from '../../../src/store/pki/certificates.js'

const NOT_AFTER = new Date('2026-12-02T00:00:00Z')

function row(fingerprint: string): PresentedCertificate {
  return {
    id: fingerprint,
    nodeId: `node-${fingerprint}`,
    fingerprintSha256: fingerprint,
    serial: '01',
    notBefore: new Date(0),
    notAfter: NOT_AFTER,
    issuerCaSha256: 'c'.repeat(64),
    purpose: 'agent',
    replacesId: null,
    firstUsedAt: null,
    revokedAt: null,
    createdAt: new Date(0),
    nodeStatus: 'active',
  }
}

/** A cache of rows, and a database whose read can run something while it is out (an announcement). */
function harness(
  duringRead: (cache: Map<string, PresentedCertificate>) => void,
  database: Record<string, { revoked_at: Date | null; node_status: string }>,
) {
  const cache = new Map(['a', 'b', 'c'].map((f) => [f, row(f)]))
  const auth = {
    setCacheMs: () => undefined,
    cachedFingerprints: () => [...cache.keys()],
    peek: (f: string) => cache.get(f),
    evictFingerprint: (f: string) => void cache.delete(f),
  } as unknown as AgentAuthenticator
  const pool = {
    query: async (_sql: string, [fingerprints]: [string[]]) => {
      duringRead(cache)
      return {
        rows: fingerprints
          .filter((f) => database[f])
          .map((f) => ({ fingerprint_sha256: f, not_after: NOT_AFTER, ...database[f] })),
      }
    },
  } as unknown as pg.Pool
  const warnings: string[] = []
  const keeper = new AuthCacheKeeper({
    auth,
    pool,
    rawPool: pool,
    logger: (level, msg) => {
      if (level === 'warn') warnings.push(msg)
    },
    cacheMs: 600_000,
    unheardCacheMs: 1000,
    recheckMs: 60_000,
    relistenMs: 1000,
  })
  return { cache, keeper, warnings }
}

describe('gateway: the authentication cache re-check', () => {
  it('drops a row whose revocation nobody announced, and says so', async () => {
    const { cache, keeper, warnings } = harness(() => undefined, {
      a: { revoked_at: null, node_status: 'active' },
      b: { revoked_at: new Date(), node_status: 'active' },
      c: { revoked_at: null, node_status: 'active' },
    })
    assert.equal(await keeper.recheck(), 1)
    assert.deepEqual([...cache.keys()], ['a', 'c'])
    assert.deepEqual(warnings, ['auth_cache_stale_rows'])
  })

  it('does not count a row an announcement dropped, or one read again, while the read was out', async () => {
    const { cache, keeper, warnings } = harness(
      (c) => {
        c.delete('b') // an announcement for b's node, heard during the read
        c.set('c', { ...row('c'), nodeStatus: 'unhealthy' }) // c read again by a request, newer than the re-check's read
      },
      {
        a: { revoked_at: null, node_status: 'active' },
        b: { revoked_at: new Date(), node_status: 'active' },
        c: { revoked_at: null, node_status: 'active' },
      },
    )
    assert.equal(await keeper.recheck(), 0)
    assert.deepEqual([...cache.keys()], ['a', 'c'])
    assert.deepEqual(warnings, [])
  })
})
