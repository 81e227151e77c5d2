// The sync ledger on a real PostgreSQL: a run and every node recorded at once, node states, the
// applied revision (only a converged sync at a commit), the converged-content check and the lock.
import assert from 'node:assert/strict'

import {
  contentConvergedBefore,
  createSyncRun,
  finishSyncRun,
  getSyncRun,
  lastAppliedRevision,
  lastFinishedSync,
  listSyncNodes,
  listUnfinishedSyncRuns,
  resumeSyncRun,
  setSyncNode,
  SYNC_LOCK_KEY,
  type NewSyncRun,
} from '../../../src/store/sync/sync-ledger.js'
import { releaseAdvisoryLock, tryAdvisoryLock } from '../../../src/store/advisory-lock.js'
import { freshDatabasePerTest } from '../../support/postgres.js'

const REV_A = 'a'.repeat(40)
const REV_B = 'b'.repeat(40)

function newRun(overrides: Partial<NewSyncRun> = {}): NewSyncRun {
  return {
    kind: 'sync',
    revision: REV_A,
    definitionSha256: 'd'.repeat(64),
    planHash: 'e'.repeat(64),
    plan: { contentHash: 'c1', limited: false, tags: [] },
    startedBy: 'ops@laptop',
    pid: 4242,
    nodes: [
      { nodeId: 'app-1', phase: 'canary', state: 'pending' },
      { nodeId: 'app-2', phase: 'fleet', state: 'pending' },
      { nodeId: 'app-3', phase: 'skipped', state: 'skipped', message: 'parked' },
    ],
    ...overrides,
  }
}

describe('store: sync ledger', function () {
  this.timeout(60_000)
  const database = freshDatabasePerTest()

  it('records the run with every node, skipped ones included, then each node state as it ends', async () => {
    const run = await createSyncRun(database().pool, newRun())
    assert.equal(run.status, 'running')
    assert.deepEqual(
      (await listSyncNodes(database().pool, run.id)).map((n) => [n.nodeId, n.phase, n.state]),
      [
        ['app-1', 'canary', 'pending'],
        ['app-2', 'fleet', 'pending'],
        ['app-3', 'skipped', 'skipped'],
      ],
    )
    await setSyncNode(database().pool, run.id, 'app-1', { state: 'running' })
    await setSyncNode(database().pool, run.id, 'app-1', {
      state: 'changed',
      tasksOk: 12,
      tasksChanged: 3,
      changes: { firewall: ['Apply'] },
      appliedRevision: REV_A,
      agentVersion: '1.0.0',
    })
    await setSyncNode(database().pool, run.id, 'app-2', {
      state: 'not_attempted',
      message: 'the canary app-1 did not converge',
    })
    const nodes = await listSyncNodes(database().pool, run.id)
    assert.deepEqual(nodes[0], {
      nodeId: 'app-1',
      phase: 'canary',
      state: 'changed',
      code: null,
      message: null,
      tasksOk: 12,
      tasksChanged: 3,
      tasksFailed: 0,
      changes: { firewall: ['Apply'] },
      appliedRevision: REV_A,
      agentVersion: '1.0.0',
    })
    assert.equal(nodes[1]?.state, 'not_attempted')
    assert.deepEqual(
      (await listUnfinishedSyncRuns(database().pool)).map((r) => r.id),
      [run.id],
    )
    await resumeSyncRun(database().pool, run.id, 999, 'other@host')
    assert.deepEqual(
      [(await getSyncRun(database().pool, run.id))?.attempts, (await getSyncRun(database().pool, run.id))?.pid],
      [2, 999],
    )
    await finishSyncRun(database().pool, run.id, 'partial')
    assert.deepEqual(await listUnfinishedSyncRuns(database().pool), [])
  })

  it('refuses a state outside spec 04 and a revision that is not a full SHA', async () => {
    const run = await createSyncRun(database().pool, newRun())
    await assert.rejects(setSyncNode(database().pool, run.id, 'app-1', { state: 'ok' as never }), { code: '23514' })
    await assert.rejects(createSyncRun(database().pool, newRun({ revision: 'main' })), { code: '23514' })
  })

  it('the applied revision is the last sync that converged every node at a commit; dry runs, partial runs and limited runs do not count', async () => {
    assert.equal(await lastAppliedRevision(database().pool), undefined)
    const a = await createSyncRun(database().pool, newRun())
    await finishSyncRun(database().pool, a.id, 'converged')
    const partial = await createSyncRun(database().pool, newRun({ revision: REV_B }))
    await finishSyncRun(database().pool, partial.id, 'partial')
    const dry = await createSyncRun(database().pool, newRun({ kind: 'dry_run', revision: REV_B }))
    await finishSyncRun(database().pool, dry.id, 'converged')
    const uncommitted = await createSyncRun(database().pool, newRun({ revision: null }))
    await finishSyncRun(database().pool, uncommitted.id, 'converged')
    assert.equal((await lastAppliedRevision(database().pool))?.revision, REV_A)
    assert.equal(await contentConvergedBefore(database().pool, 'c1'), true)
    assert.equal(await contentConvergedBefore(database().pool, 'c2'), false)
    const limited = await createSyncRun(
      database().pool,
      newRun({ revision: REV_B, plan: { contentHash: 'c3', limited: true, tags: [] } }),
    )
    await finishSyncRun(database().pool, limited.id, 'converged')
    assert.equal(
      await contentConvergedBefore(database().pool, 'c3'),
      false,
      'a --limit run does not prove the whole fleet converged',
    )
    const tagged = await createSyncRun(
      database().pool,
      newRun({ revision: REV_B, plan: { contentHash: 'c4', limited: false, tags: ['firewall'] } }),
    )
    await finishSyncRun(database().pool, tagged.id, 'converged')
    assert.equal(await contentConvergedBefore(database().pool, 'c4'), true)
    assert.equal(
      (await lastAppliedRevision(database().pool))?.runId,
      a.id,
      'a --limit or --tags run did not apply the whole revision',
    )
  })

  it('the last finished sync (what /metrics shows) is the latest finished sync run with its nodes counted; dry runs, drift checks and open runs do not count', async () => {
    const pool = database().pool
    assert.equal(await lastFinishedSync(pool), undefined)
    const converged = await createSyncRun(pool, newRun())
    await finishSyncRun(pool, converged.id, 'converged')
    const partial = await createSyncRun(pool, newRun())
    await setSyncNode(pool, partial.id, 'app-1', { state: 'converged' })
    await setSyncNode(pool, partial.id, 'app-2', { state: 'failed', code: 'SYNC_NODE_FAILED' })
    await finishSyncRun(pool, partial.id, 'partial')
    const dry = await createSyncRun(pool, newRun({ kind: 'dry_run' }))
    await finishSyncRun(pool, dry.id, 'converged')
    const drift = await createSyncRun(pool, newRun({ kind: 'drift' }))
    await finishSyncRun(pool, drift.id, 'no_drift')
    await createSyncRun(pool, newRun())
    const last = await lastFinishedSync(pool)
    assert.deepEqual(
      { runId: last?.runId, outcome: last?.outcome, nodes: last?.nodes },
      { runId: partial.id, outcome: 'partial', nodes: { converged: 1, failed: 1, skipped: 1 } },
    )
    assert.deepEqual(last?.finishedAt, (await getSyncRun(pool, partial.id))?.finishedAt)
  })

  it('one session holds the sync lock at a time; it is free again once released', async () => {
    const a = await database().pool.connect()
    const b = await database().pool.connect()
    try {
      assert.equal(await tryAdvisoryLock(a, SYNC_LOCK_KEY), true)
      assert.equal(await tryAdvisoryLock(b, SYNC_LOCK_KEY), false)
      await releaseAdvisoryLock(a, SYNC_LOCK_KEY)
      assert.equal(await tryAdvisoryLock(b, SYNC_LOCK_KEY), true)
      await releaseAdvisoryLock(b, SYNC_LOCK_KEY)
    } finally {
      a.release()
      b.release()
    }
  })
})
