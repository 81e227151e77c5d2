// Exactly one sweeper across gateways (issue 24, item 4): the sweep lease is a row whose expiry the
// database's clock sets. Of gateways claiming at once exactly one leads; a leader that stops cleanly
// hands it on at the next tick; one that dies or freezes (no release) loses it once it expired, and
// finds out at its next tick. Real PostgreSQL; the sweeps are counted, not run. Then a real gateway
// process holding the lease is killed (SIGKILL: no release) and a second gateway takes it over. Each claim
// records the thresholds its holder judges with, which `fleetkit sweep` by hand judges with too.
import assert from 'node:assert/strict'

import { Sweeper, type SweepFunction } from '../../../src/gateway/sweeper.js'
import { LifecycleMetrics } from '../../../src/gateway/metrics/lifecycle-metrics.js'
import { DEFAULT_THRESHOLDS } from '../../../src/lifecycle/node/thresholds.js'
import { memoryLogger } from '../../../src/log/logger.js'
import { claimSweepLease, readSweepLease, releaseSweepLease } from '../../../src/store/nodes/sweep-leader.js'
import { eventually } from '../../support/eventually.js'
import { type TestGateway, startTestGateway } from '../../support/gateway.js'
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
      thresholds: DEFAULT_THRESHOLDS,
      intervalMs: 60_000,
      leaseMs,
      holder,
      logger: log,
      metrics: new LifecycleMetrics(db.pool, () => undefined),
    })
    return { s, log }
  }

  it('of ten holders claiming at once exactly one leads, and only it renews', async () => {
    const claims = await Promise.all(
      Array.from({ length: 10 }, (_, i) => claimSweepLease(db.pool, `gw-${i}`, 5000, DEFAULT_THRESHOLDS)),
    )
    const leaders = claims.flatMap((c, i) => (c.leading ? [`gw-${i}`] : []))
    assert.equal(leaders.length, 1)
    const lease = (await readSweepLease(db.pool))!
    assert.equal(lease.holder, leaders[0])
    assert.ok(lease.expiresAt.getTime() > lease.readAt.getTime())
    const again = await claimSweepLease(db.pool, leaders[0]!, 5000, DEFAULT_THRESHOLDS)
    assert.deepEqual([again.leading, again.acquired], [true, false])
    const other = await claimSweepLease(db.pool, leaders[0] === 'gw-0' ? 'gw-1' : 'gw-0', 5000, DEFAULT_THRESHOLDS)
    assert.equal(other.leading, false)
  })

  it("each claim records its holder's thresholds; a refused claim leaves them; a release keeps them", async () => {
    const lenient = { unhealthyAfterSeconds: 1800, lostAfterSeconds: 3600 }
    assert.equal((await claimSweepLease(db.pool, 'gw-a', 30_000, lenient)).leading, true)
    assert.deepEqual((await readSweepLease(db.pool))!.thresholds, lenient)
    // Another gateway, judging otherwise, is refused the lease: what the fleet is judged with stays.
    assert.equal((await claimSweepLease(db.pool, 'gw-b', 30_000, DEFAULT_THRESHOLDS)).leading, false)
    assert.deepEqual((await readSweepLease(db.pool))!.thresholds, lenient)
    // A renewal writes them again.
    const stricter = { unhealthyAfterSeconds: 60, lostAfterSeconds: 120 }
    await claimSweepLease(db.pool, 'gw-a', 30_000, stricter)
    const renewed = (await readSweepLease(db.pool))!
    assert.deepEqual(renewed.thresholds, stricter)
    assert.ok(renewed.renewedAt.getTime() <= renewed.readAt.getTime())
    // A gateway's tick claims with its own; a clean stop releases the lease and leaves them recorded.
    const c = new Sweeper({
      pool: db.pool,
      sweep: async () => ({ swept: true, unhealthy: [], lost: [], durationMs: 1 }),
      thresholds: lenient,
      intervalMs: 60_000,
      leaseMs: 30_000,
      holder: 'gw-c',
      logger: memoryLogger('gateway', 'debug'),
      metrics: new LifecycleMetrics(db.pool, () => undefined),
    })
    await releaseSweepLease(db.pool, 'gw-a')
    assert.equal(await c.tick(), 'swept')
    assert.deepEqual(
      [(await readSweepLease(db.pool))!.holder, (await readSweepLease(db.pool))!.thresholds],
      ['gw-c', lenient],
    )
    await c.stop()
    const left = (await readSweepLease(db.pool))!
    assert.ok(left.expiresAt.getTime() <= left.readAt.getTime(), 'released')
    assert.deepEqual([left.holder, left.thresholds], ['gw-c', lenient])
    // The table keeps both or neither, and lost above unhealthy, as the gateway's variables must be.
    await assert.rejects(db.pool.query('UPDATE sweep_leader SET lost_after_seconds = NULL'), { code: '23514' })
    await assert.rejects(db.pool.query('UPDATE sweep_leader SET lost_after_seconds = 1800'), { code: '23514' })
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
    const held = (await readSweepLease(db.pool))!
    assert.equal(await b.s.tick(), 'not_leader')
    await eventually('gw-b to take over', async () => (await b.s.tick()) === 'swept', { intervalMs: 100 })
    const taken = b.log.lines.find((l) => l.msg === 'sweep_leader' && l.leader === true)!
    assert.equal(taken.previous_holder, 'gw-a')
    assert.ok((taken.previous_expired_seconds as number) >= 0)
    // Not before gw-a's lease ran out, on the database's clock (the only one the lease knows).
    const took = (await readSweepLease(db.pool))!
    assert.equal(took.holder, 'gw-b')
    assert.ok(
      took.acquiredAt.getTime() >= held.expiresAt.getTime(),
      `taken at ${took.acquiredAt.toISOString()}, gw-a's lease ran until ${held.expiresAt.toISOString()}`,
    )
    // gw-a wakes: its renewal fails, it steps down and never sweeps beside gw-b.
    assert.equal(await a.s.tick(), 'not_leader')
    assert.equal(a.s.isLeader, false)
    assert.ok(a.log.lines.some((l) => l.msg === 'sweep_leader' && l.leader === false))
    assert.deepEqual(sweptBy, ['gw-a', 'gw-b'])
    await b.s.stop()
  })
})

describe('the sweep lease across gateways, its holder killed (real gateway process, real PostgreSQL)', function () {
  this.timeout(60_000)
  let postgres: DisposablePostgres
  let leader: TestGateway | undefined
  let follower: TestGateway | undefined
  before(async () => {
    postgres = await startDisposablePostgres()
  })
  after(async () => {
    await follower?.close()
    await leader?.close()
    await postgres?.stop()
  })

  it('the other gateway takes the lease at its first tick after the killed one ran out, and not before', async () => {
    // `fleetkit gateway serve` as a process (it sweeps: the lease is its), with the shortest lease it accepts.
    leader = await startTestGateway({
      postgresUrl: postgres.url,
      mode: 'process',
      env: { FLEETKIT_SWEEP_LEASE_SECONDS: '5' },
    })
    const pool = leader.db.pool
    const pid = leader.child!.pid!
    const held = await eventually('the gateway process to hold the lease', async () => {
      const lease = await readSweepLease(pool)
      return lease?.holder.includes(`:${pid}:`) ? lease : undefined
    })
    // A second gateway on the same database and PKI, ticking only when told to.
    follower = await startTestGateway({
      postgresUrl: postgres.url,
      shared: leader,
      tuning: { sweepIntervalMs: 3_600_000, sweepLeaseMs: 5000 },
    })
    assert.equal(await follower.gateway!.sweepNow(), 'not_leader', 'the living holder keeps it')
    assert.equal(follower.gateway!.isSweepLeader(), false)

    const exited = new Promise((resolve) => leader!.child!.once('exit', resolve))
    leader.child!.kill('SIGKILL')
    await exited
    // Nobody renews from here and nobody released it: only its expiry, on the database's clock, frees it.
    const ticks: { tick: string; expired: boolean }[] = []
    let oldExpiry = held.expiresAt.getTime()
    await eventually(
      'the second gateway to take the lease',
      async () => {
        const lease = (await readSweepLease(pool))!
        const expired = lease.holder === held.holder && lease.readAt.getTime() >= lease.expiresAt.getTime()
        if (lease.holder === held.holder) oldExpiry = Math.max(oldExpiry, lease.expiresAt.getTime())
        const tick = await follower!.gateway!.sweepNow()
        ticks.push({ tick, expired })
        return tick === 'swept'
      },
      { intervalMs: 250, timeoutMs: 30_000 },
    )
    // Within the lease: a tick that began after the lease ran out took it (none waited a tick more).
    assert.deepEqual(
      ticks.filter((t) => t.expired && t.tick !== 'swept'),
      [],
      JSON.stringify(ticks),
    )
    // Never two at once: taken no earlier than the killed holder's last renewal ran out.
    const taken = (await readSweepLease(pool))!
    assert.notEqual(taken.holder, held.holder)
    assert.equal(follower.gateway!.isSweepLeader(), true)
    assert.ok(
      taken.acquiredAt.getTime() >= oldExpiry,
      `taken at ${taken.acquiredAt.toISOString()}, before ${new Date(oldExpiry).toISOString()}`,
    )
  })
})
