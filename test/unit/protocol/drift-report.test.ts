// The heartbeat's drift field: an old agent's absence, a reason, a digest; anything malformed is none.
import assert from 'node:assert/strict'

import { readHeartbeatRequest } from '../../../src/protocol/agent-routes.js'
import { DRIFT_PARTS_MAX, readDriftReport } from '../../../src/protocol/drift-report.js'

const SHA = 'a'.repeat(64)
const DIGEST = { digest: SHA, keys_sha256: SHA, parts: { nft: SHA, sshd: SHA }, checked_at: '2026-12-06T20:00:00Z' }

describe('protocol: drift report', () => {
  it('an old agent sends none: the heartbeat still reads, with no drift', () => {
    assert.deepEqual(readHeartbeatRequest({ facts: null }), { facts: null, drift: null })
    assert.deepEqual(readHeartbeatRequest({ facts: null, drift: DIGEST }).drift, DIGEST)
  })

  it('reads a digest or a reason; a malformed one is none rather than a refused heartbeat', () => {
    assert.deepEqual(readDriftReport(DIGEST), DIGEST)
    assert.deepEqual(readDriftReport({ unavailable: 'stale' }), { unavailable: 'stale' })
    assert.equal(readDriftReport({ unavailable: 'because' }), null)
    assert.equal(readDriftReport({ ...DIGEST, digest: 'zz' }), null)
    assert.equal(readDriftReport({ ...DIGEST, parts: {} }), null)
    assert.equal(readDriftReport({ ...DIGEST, parts: { 'Bad Kind': SHA } }), null)
    assert.equal(readDriftReport({ ...DIGEST, checked_at: 'yesterday' }), null)
    assert.equal(readDriftReport('text'), null)
    const many = Object.fromEntries(Array.from({ length: DRIFT_PARTS_MAX + 1 }, (_, i) => [`k${i}`, SHA]))
    assert.equal(readDriftReport({ ...DIGEST, parts: many }), null)
  })

  it('keeps only the fields it knows', () => {
    const read = readDriftReport({ ...DIGEST, items: { 'path:/etc/shadow': 'x' } })
    assert.deepEqual(read, DIGEST)
  })
})
