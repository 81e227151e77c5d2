// Time in which no gateway could record heartbeats is not silence (real PostgreSQL): a gateway whose
// database went away records the stretch when it comes back, the gateway that takes over a lease that lay
// unclaimed records the time since its last renewal, and the sweep subtracts both, each moment once. A
// control-plane outage longer than the lost threshold no longer makes the whole fleet lost at its end.
import assert from 'node:assert/strict'

import { Sweeper } from '../../../src/gateway/sweeper.js'
import { LifecycleMetrics } from '../../../src/gateway/metrics/lifecycle-metrics.js'
import { runManualSweep } from '../../../src/lifecycle/node/manual-sweep.js'
import { runSweep } from '../../../src/lifecycle/node/sweep.js'
import { memoryLogger } from '../../../src/log/logger.js'
import { listEvents } from '../../../src/store/events.js'
import { getNode, upsertDeclaredNode } from '../../../src/store/nodes/nodes.js'
import { listSweepGaps, recordSweepGap } from '../../../src/store/nodes/sweep-gaps.js'
import { freshDatabasePerTest } from '../../support/postgres.js'

const THRESHOLDS = { unhealthyAfterSeconds: 90, lostAfterSeconds: 300 }

describe('sweep gaps: time no gateway could record heartbeats is not silence (real PostgreSQL)', function () {
  this.timeout(60_000)
  const db = freshDatabasePerTest()

  async function activeNode(id: string, silentSeconds: number) {
    await upsertDeclaredNode(db().pool, { id, pool: 'workers', status: 'active' })
    await db().pool.query('UPDATE nodes SET last_seen_at = now() - make_interval(secs => $2) WHERE id = $1', [
      id,
      silentSeconds,
    ])
  }
  const statusOf = async (id: string) => (await getNode(db().pool, id))!.status

  it('a node silent 400 s across a recorded 200 s outage is judged 200 s silent: unhealthy, not lost', async () => {
    await activeNode('w-1', 400)
    await activeNode('w-2', 400)
    await recordSweepGap(db().pool, 200, 'database')
    const swept = await runSweep(db().pool, THRESHOLDS)
    assert.deepEqual(swept.lost, [])
    assert.deepEqual(
      swept.unhealthy.map((u) => [u.nodeId, u.silentSeconds >= 199 && u.silentSeconds <= 202]),
      [
        ['w-1', true],
        ['w-2', true],
      ],
    )
    const [event] = await listEvents(db().pool, { nodeId: 'w-1', kind: 'node_unhealthy' })
    assert.ok(Number(event!.data.silent_seconds) < 300, 'the event says the silence judged')
  })

  it('overlapping outages recorded by two gateways count once; a gap before the last heartbeat counts nothing', async () => {
    await activeNode('w-3', 400)
    await Promise.all([recordSweepGap(db().pool, 60, 'database'), recordSweepGap(db().pool, 90, 'database')])
    assert.equal((await listSweepGaps(db().pool)).length, 1, 'merged into one stretch')
    await recordSweepGap(db().pool, 30, 'no_sweeper')
    assert.equal((await listSweepGaps(db().pool)).length, 1)
    // 400 s less one 90 s stretch is still past the 300 s threshold.
    assert.deepEqual(
      (await runSweep(db().pool, THRESHOLDS)).lost.map((l) => l.nodeId),
      ['w-3'],
    )
    // A node heard from after the stretch ended is judged on its own silence.
    await activeNode('w-4', 0)
    assert.deepEqual((await runSweep(db().pool, THRESHOLDS)).unhealthy, [])
  })

  function sweeper(options: { holder: string; databaseAvailable?: () => boolean; nowMs: () => number }) {
    const log = memoryLogger('gateway', 'debug')
    const s = new Sweeper({
      pool: db().pool,
      sweep: (pool) => runSweep(pool, THRESHOLDS),
      thresholds: THRESHOLDS,
      intervalMs: 60_000,
      leaseMs: 10_000,
      logger: log,
      metrics: new LifecycleMetrics(db().pool, () => undefined),
      ...options,
    })
    return { s, log }
  }

  it("the gateway's database outage is recorded when it comes back, before the sweep that follows judges", async () => {
    let nowMs = 0
    let available = true
    const { s, log } = sweeper({ holder: 'gw-a', databaseAvailable: () => available, nowMs: () => nowMs })
    await activeNode('w-5', 0)
    assert.equal(await s.tick(), 'swept')
    // The database goes away for 400 s: heartbeats are answered 503, so last_seen_at stays where it was.
    available = false
    nowMs += 400_000
    assert.equal(await s.tick(), 'failed', 'no sweep judges while heartbeats go unrecorded')
    await db().pool.query(`UPDATE nodes SET last_seen_at = now() - interval '400 seconds' WHERE id = 'w-5'`)
    available = true
    nowMs += 2000
    assert.equal(await s.tick(), 'swept')
    const [gap] = await listSweepGaps(db().pool)
    assert.equal(gap!.reason, 'database')
    const seconds = (gap!.endedAt.getTime() - gap!.startedAt.getTime()) / 1000
    assert.ok(seconds > 401 && seconds < 403, String(seconds))
    assert.equal(await statusOf('w-5'), 'active', 'neither lost nor unhealthy: the silence was the gateway’s')
    assert.ok(log.lines.some((l) => l.msg === 'sweep_gap' && l.reason === 'database' && l.seconds === 402))
    await s.stop()
  })

  it('a gateway that takes over a lease unclaimed for 10 minutes records that, before its first sweep', async () => {
    await activeNode('w-6', 600)
    await db().pool.query(
      `INSERT INTO sweep_leader (id, holder, acquired_at, renewed_at, expires_at)
       VALUES (1, 'gw-old', now() - interval '1 day', now() - interval '600 seconds', now() - interval '590 seconds')`,
    )
    const { s, log } = sweeper({ holder: 'gw-new', nowMs: () => 0 })
    assert.equal(await s.tick(), 'swept')
    assert.equal(await statusOf('w-6'), 'active')
    const [gap] = await listSweepGaps(db().pool)
    assert.equal(gap!.reason, 'no_sweeper')
    assert.ok(log.lines.some((l) => l.msg === 'sweep_gap' && l.reason === 'no_sweeper' && l.seconds === 600))
    await s.stop()
  })

  it('a gateway frozen holding the lease for 10 minutes records that when it renews, before it sweeps', async () => {
    let nowMs = 0
    const { s, log } = sweeper({ holder: 'gw-a', nowMs: () => nowMs })
    await activeNode('w-8', 0)
    assert.equal(await s.tick(), 'swept')
    // SIGSTOP (a paused VM): nothing runs for 600 s, no heartbeat is answered, its lease runs out unclaimed.
    await db().pool.query(
      `UPDATE sweep_leader SET renewed_at = now() - interval '600 seconds', expires_at = now() - interval '590 seconds'`,
    )
    await db().pool.query(`UPDATE nodes SET last_seen_at = now() - interval '600 seconds' WHERE id = 'w-8'`)
    nowMs += 600_000
    // Before, the renewal of its own lease recorded nothing and this sweep made the node lost.
    assert.equal(await s.tick(), 'swept')
    assert.equal(await statusOf('w-8'), 'active')
    assert.deepEqual(
      (await listSweepGaps(db().pool)).map((g) => g.reason),
      ['no_sweeper'],
    )
    assert.ok(log.lines.some((l) => l.msg === 'sweep_gap' && l.reason === 'no_sweeper' && l.seconds === 600))
    await s.stop()
  })

  it('a holder renewing on time records nothing: its dead node is found lost on time', async () => {
    let nowMs = 0
    const { s } = sweeper({ holder: 'gw-a', nowMs: () => nowMs })
    await activeNode('w-9', 400)
    await db().pool.query(
      `INSERT INTO sweep_leader (id, holder, acquired_at, renewed_at, expires_at)
       VALUES (1, 'gw-a', now() - interval '1 day', now() - interval '4 seconds', now() + interval '6 seconds')`,
    )
    nowMs += 5_000
    assert.equal(await s.tick(), 'swept')
    assert.deepEqual(await listSweepGaps(db().pool), [])
    assert.equal(await statusOf('w-9'), 'lost')
    await s.stop()
  })

  it('a sweep by hand while no gateway holds the lease records the unswept time first: no node is lost of it', async () => {
    await activeNode('w-10', 600)
    await activeNode('w-11', 4000)
    await db().pool.query(
      `INSERT INTO sweep_leader (id, holder, acquired_at, renewed_at, expires_at, unhealthy_after_seconds, lost_after_seconds)
       VALUES (1, 'gw-old', now() - interval '1 day', now() - interval '700 seconds', now() - interval '690 seconds', 90, 300)`,
    )
    const swept = await runManualSweep(db().pool, { env: {}, thresholdsFromEnv: false })
    // w-10 went silent while no gateway ran: not evidence. w-11 was silent long before the gateway stopped.
    assert.deepEqual(
      swept.lost.map((n) => n.nodeId),
      ['w-11'],
    )
    assert.equal(await statusOf('w-10'), 'active')
    assert.ok(swept.unsweptSeconds !== undefined && swept.unsweptSeconds >= 699, String(swept.unsweptSeconds))
    assert.deepEqual(
      (await listSweepGaps(db().pool)).map((g) => g.reason),
      ['no_sweeper'],
    )
    // While a gateway holds it, a sweep by hand records nothing.
    await db().pool.query(
      `UPDATE sweep_leader SET renewed_at = now(), expires_at = now() + interval '10 seconds' WHERE id = 1`,
    )
    await db().pool.query('DELETE FROM sweep_gaps')
    assert.equal((await runManualSweep(db().pool, { env: {}, thresholdsFromEnv: false })).unsweptSeconds, undefined)
    assert.deepEqual(await listSweepGaps(db().pool), [])
  })

  it('a take-over as quick as a lease records nothing: a dead node is still found lost on time', async () => {
    await activeNode('w-7', 400)
    await db().pool.query(
      `INSERT INTO sweep_leader (id, holder, acquired_at, renewed_at, expires_at)
       VALUES (1, 'gw-old', now() - interval '1 day', now() - interval '12 seconds', now() - interval '2 seconds')`,
    )
    const { s } = sweeper({ holder: 'gw-new', nowMs: () => 0 })
    assert.equal(await s.tick(), 'swept')
    assert.deepEqual(await listSweepGaps(db().pool), [])
    assert.equal(await statusOf('w-7'), 'lost')
    await s.stop()
  })
})
