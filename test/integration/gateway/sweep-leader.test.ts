// Exactly one sweeper across gateways (issue 24, item 4): the sweep lease is a row whose expiry the
// database's clock sets. Of gateways claiming at once exactly one leads; a leader that stops cleanly
// hands it on at the next tick; one that dies or freezes (no release) loses it once it expired, and
// finds out at its next tick. Real PostgreSQL; the sweeps are counted, not run.
import assert from 'node:assert/strict'

import { Sweeper, type SweepFunction } from '../../../src/gateway/sweeper.js'
import { LifecycleMetrics } from '../../../src/gateway/lifecycle-metrics.js'
import { memoryLogger } from '../../../src/log/logger.js'
import { claimSweepLease, readSweepLease } from '../../../src/store/sweep-leader.js'
import { eventually } from '../../support/eventually.js'
import {
  type DisposablePostgres,
  type FreshDatabase,
  freshDatabase,
  startDisposablePostgres,
} from '../../support/postgres.js'

describe('the sweep lease (real PostgreSQL)', function () {
  this.timeout(60_000)
  let postgres: DisposablePostgres
  let db: FreshDatabase
  before(async () => {
    postgres = await startDisposablePostgres()
  })
  after(async () => {
    await postgres?.stop()
  })
  beforeEach(async () => {
    db = await freshDatabase(postgres.url)
  })
  afterEach(async () => {
    await db?.drop()
  })

  const sweptBy: string[] = []
  function sweeper(holder: string, leaseMs: number, log = memoryLogger('gateway', 'debug')) {
    const sweep: SweepFunction = async () => {
      sweptBy.push(holder)
      return { swept: true, unhealthy: [], lost: [], durationMs: 1 }
    }
    const s = new Sweeper({
      pool: db.pool,
      sweep,
      intervalMs: 60_000,
      leaseMs,
      holder,
      logger: log,
      metrics: new LifecycleMetrics(db.pool, () => undefined),
    })
    return { s, log }
  }

  it('of ten holders claiming at once exactly one leads, and only it renews', async () => {
    const claims = await Promise.all(Array.from({ length: 10 }, (_, i) => claimSweepLease(db.pool, `gw-${i}`, 5000)))
    const leaders = claims.flatMap((c, i) => (c.leading ? [`gw-${i}`] : []))
    assert.equal(leaders.length, 1)
    const lease = (await readSweepLease(db.pool))!
    assert.equal(lease.holder, leaders[0])
    assert.ok(lease.expiresAt.getTime() > lease.readAt.getTime())
    const again = await claimSweepLease(db.pool, leaders[0]!, 5000)
    assert.deepEqual([again.leading, again.acquired], [true, false])
    const other = await claimSweepLease(db.pool, leaders[0] === 'gw-0' ? 'gw-1' : 'gw-0', 5000)
    assert.equal(other.leading, false)
  })

  it('a clean stop hands the lease on at the next tick of another gateway', async () => {
    sweptBy.length = 0
    const a = sweeper('gw-a', 30_000)
    const b = sweeper('gw-b', 30_000)
    assert.equal(await a.s.tick(), 'swept')
    assert.equal(await b.s.tick(), 'not_leader')
    await a.s.stop()
    assert.equal(await b.s.tick(), 'swept')
    const taken = b.log.lines.find((l) => l.msg === 'sweep_leader' && l.leader === true)
    assert.equal(taken?.previous_holder, 'gw-a')
    assert.deepEqual(sweptBy, ['gw-a', 'gw-b'])
  })

  it('a leader that dies without a word loses the lease once it expired, and learns it at its next tick', async () => {
    sweptBy.length = 0
    const a = sweeper('gw-a', 1000)
    const b = sweeper('gw-b', 1000)
    assert.equal(await a.s.tick(), 'swept')
    // gw-a is frozen from here: no renewal, no release.
    const frozenAt = Date.now()
    assert.equal(await b.s.tick(), 'not_leader')
    await eventually('gw-b to take over', async () => (await b.s.tick()) === 'swept', { intervalMs: 100 })
    const tookMs = Date.now() - frozenAt
    const taken = b.log.lines.find((l) => l.msg === 'sweep_leader' && l.leader === true)!
    assert.equal(taken.previous_holder, 'gw-a')
    assert.ok((taken.previous_expired_seconds as number) >= 0)
    assert.ok(tookMs >= 1000, `taken over ${tookMs} ms after the freeze, before the lease ran out`)
    // gw-a wakes: its renewal fails, it steps down and never sweeps beside gw-b.
    assert.equal(await a.s.tick(), 'not_leader')
    assert.equal(a.s.isLeader, false)
    assert.ok(a.log.lines.some((l) => l.msg === 'sweep_leader' && l.leader === false))
    assert.deepEqual(sweptBy, ['gw-a', 'gw-b'])
    await b.s.stop()
  })
})
