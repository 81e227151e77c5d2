// The provider's request budget shared through the state (migration 0010): processes of one project
// (here, separate pools) see each other's takes and 429s, and the row never holds the token.
import assert from 'node:assert/strict'

import pg from 'pg'

import { seededRng } from '../../../src/config/rng.js'
import { ApiToken } from '../../../src/provider/api-token.js'
import { HetznerClient } from '../../../src/provider/hetzner.js'
import { type HetznerStub, startHetznerStub } from '../../../src/provider/hetzner-stub.js'
import { sharedRateBudget } from '../../../src/provider/shared-rate-budget.js'
import { readRateLimit } from '../../../src/store/provider/provider-rate-limits.js'
import { hetznerTimeline } from '../../support/hetzner-timeline.js'
import { freshDatabasePerTest } from '../../support/postgres.js'

describe('provider: the rate budget shared through the state (real PostgreSQL)', function () {
  this.timeout(120_000)
  const db = freshDatabasePerTest()
  const pools: pg.Pool[] = []
  /** Another process's connection to the same database. */
  function otherProcess(): pg.Pool {
    const pool = new pg.Pool({ connectionString: db().url, max: 4 })
    pool.on('error', () => undefined)
    pools.push(pool)
    return pool
  }
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.end()))
  })

  const key = new ApiToken('hcloud-token-of-the-project').budgetKey()

  it('concurrent takes from many processes let out exactly what is left, no more', async () => {
    const budgets = [sharedRateBudget(otherProcess(), key), sharedRateBudget(otherProcess(), key)]
    await budgets[0]!.observe({ limit: 3600, remaining: 3, resetAtMs: 0 }, 1000)
    const waits = await Promise.all(Array.from({ length: 8 }, (_, i) => budgets[i % 2]!.take(1000)))
    assert.equal(waits.filter((ms) => ms === 0).length, 3, String(waits))
    assert.ok(waits.filter((ms) => ms > 0).every((ms) => ms <= 1000))
  })

  it('a 429 one process met holds every other process back until its time', async () => {
    const [a, b] = [sharedRateBudget(otherProcess(), key), sharedRateBudget(otherProcess(), key)]
    await a.block(61_000)
    assert.equal(await b.take(1000), 60_000)
    assert.equal(await b.take(61_000), 0)
  })

  it('two clients of one project against the stub: the second waits for the refill instead of drawing a 429', async () => {
    const timeline = hetznerTimeline()
    const stub: HetznerStub = await startHetznerStub({ clock: timeline.clock })
    try {
      const client = () =>
        new HetznerClient(
          {
            baseUrl: stub.url,
            clock: timeline.clock,
            sleep: timeline.sleep,
            rng: seededRng('shared'),
            budget: sharedRateBudget(otherProcess(), new ApiToken(stub.token).budgetKey()),
          },
          new ApiToken(stub.token),
        )
      stub.setRateLimit(3600, 1)
      await client().listLocations()
      await client().listLocations()
      assert.deepEqual(
        stub.requests.map((r) => r.status),
        [200, 200],
      )
      assert.ok(timeline.waits.length > 0)
      const { rows } = await db().pool.query('SELECT * FROM provider_rate_limits')
      assert.equal(rows.length, 1)
      assert.ok(!JSON.stringify(rows).includes(stub.token), 'the token never reaches the database')
      const row = await readRateLimit(db().pool, {
        provider: 'hetzner',
        projectKey: new ApiToken(stub.token).budgetKey(),
      })
      assert.equal(row?.limit, 3600)
    } finally {
      await stub.close()
    }
  })
})
