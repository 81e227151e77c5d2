// Node fingerprints on a real PostgreSQL: one row per node, replaced by the next converge, dropped
// for a node that did not converge; a digest that is not a sha256 is refused.
import assert from 'node:assert/strict'

import {
  forgetNodeFingerprints,
  getNodeFingerprints,
  recordNodeFingerprint,
} from '../../../src/store/sync/node-fingerprints.js'
import { createSyncRun } from '../../../src/store/sync/sync-ledger.js'
import { freshDatabasePerTest } from '../../support/postgres.js'

describe('store: node fingerprints', function () {
  this.timeout(60_000)
  const database = freshDatabasePerTest()

  it('records, replaces and forgets a node fingerprint', async () => {
    const CONTROLLER_TIME = new Date('2026-06-01T08:00:00.000Z')
    const run = await createSyncRun(database().pool, {
      kind: 'sync',
      revision: null,
      definitionSha256: 'd'.repeat(64),
      planHash: 'e'.repeat(64),
      plan: {},
      startedBy: 'ops@laptop',
      pid: 1,
      nodes: [{ nodeId: 'app-1', phase: 'canary', state: 'pending' }],
    })
    const resources = [{ kind: 'path', name: '/etc/fleetkit/agent.env' }]
    await recordNodeFingerprint(database().pool, {
      nodeId: 'app-1',
      inputHash: 'a'.repeat(64),
      digest: 'b'.repeat(64),
      items: { 'path:/etc/fleetkit/agent.env': '1' },
      resources,
      runId: run.id,
      recordedAt: new Date(),
    })
    await recordNodeFingerprint(database().pool, {
      nodeId: 'app-1',
      inputHash: 'a'.repeat(64),
      digest: 'c'.repeat(64),
      items: { 'path:/etc/fleetkit/agent.env': '2' },
      resources,
      runId: run.id,
      recordedAt: CONTROLLER_TIME,
    })
    await recordNodeFingerprint(database().pool, {
      nodeId: 'app-2',
      inputHash: 'a'.repeat(64),
      digest: 'c'.repeat(64),
      items: {},
      resources: [],
      runId: run.id,
      recordedAt: new Date(),
    })
    const rows = await getNodeFingerprints(database().pool, ['app-1', 'app-3'])
    assert.equal(rows.length, 1)
    // recorded_at is the controller's clock (the one the next sync judges the age on), not the database's.
    assert.deepEqual(rows[0], {
      nodeId: 'app-1',
      inputHash: 'a'.repeat(64),
      digest: 'c'.repeat(64),
      items: { 'path:/etc/fleetkit/agent.env': '2' },
      resources,
      runId: run.id,
      recordedAt: CONTROLLER_TIME,
    })
    await forgetNodeFingerprints(database().pool, ['app-1'])
    assert.deepEqual(
      (await getNodeFingerprints(database().pool, ['app-1', 'app-2'])).map((r) => r.nodeId),
      ['app-2'],
    )
    await assert.rejects(
      recordNodeFingerprint(database().pool, {
        nodeId: 'app-1',
        inputHash: 'a'.repeat(64),
        digest: 'not-a-digest',
        items: {},
        resources: [],
        runId: run.id,
        recordedAt: new Date(),
      }),
      { code: '23514' },
    )
  })
})
