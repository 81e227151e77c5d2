import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'

import { fixedClock } from '../../../src/config/clock.js'
import { loadHostPolicy } from '../../../src/definition/host-policy.js'
import { checkTransitions } from '../../../src/definition/transitions/check-transitions.js'
import type { Definition } from '../../../src/definition/types.js'
import { completeJob, createJob, leaseNextJob } from '../../../src/store/scheduling/jobs.js'
import { upsertDeclaredNode } from '../../../src/store/nodes/nodes.js'
import {
  countActiveAllocations,
  countLiveLeases,
  getCanaryProof,
  isCanaryProven,
  recordCanaryProof,
  storeTransitionFacts,
} from '../../../src/store/scheduling/transition-facts.js'
import {
  type DisposablePostgres,
  type FreshDatabase,
  freshDatabase,
  startDisposablePostgres,
} from '../../support/postgres.js'
import { validDefinition } from '../../support/definition-fixture.js'

const T0 = new Date('2026-03-01T12:00:00Z')
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000)
const token = createHash('sha256').update('lease-token').digest()

describe('transition facts from the state (real PostgreSQL)', function () {
  this.timeout(120_000)
  let server: DisposablePostgres
  let db: FreshDatabase
  const clock = fixedClock(T0)
  before(async () => {
    server = await startDisposablePostgres()
  })
  after(async () => {
    await server?.stop()
  })
  beforeEach(async () => {
    clock.set(T0)
    db = await freshDatabase(server.url)
    for (const [id, pool] of [
      ['build-1', 'build'],
      ['db-1', 'database'],
    ] as const)
      await upsertDeclaredNode(db.pool, { id, pool, status: 'active' })
  })
  afterEach(async () => {
    await db?.drop()
  })

  const check = async (previous: Definition, current: Definition) =>
    (await checkTransitions(previous, current, storeTransitionFacts(db.pool, clock), loadHostPolicy())).map((e) => [
      e.code,
      e.path,
    ])

  const withoutDb1 = () => {
    const current = validDefinition()
    current.nodes = current.nodes.filter((node) => node.id !== 'db-1')
    return current
  }

  const allocate = async (nodeId: string) => {
    const { rows } = await db.pool.query<{ id: string }>(
      "INSERT INTO allocations (node_id, owner, cpu, memory_mib, disk_gib) VALUES ($1, 'runner-7', 1, 1024, 10) RETURNING id::text AS id",
      [nodeId],
    )
    return rows[0]!.id
  }

  describe('removing a node', () => {
    it('is TRANSITION_NODE_REMOVAL_UNSAFE while it holds an active allocation, and passes once it is released', async () => {
      const allocation = await allocate('db-1')
      assert.equal(await countActiveAllocations(db.pool, 'db-1'), 1)
      assert.deepEqual(await check(validDefinition(), withoutDb1()), [['TRANSITION_NODE_REMOVAL_UNSAFE', '/nodes']])

      await db.pool.query(
        "UPDATE allocations SET status = 'released', released_at = $2, release_reason = 'done' WHERE id = $1",
        [allocation, at(60)],
      )
      assert.equal(await countActiveAllocations(db.pool, 'db-1'), 0)
      assert.deepEqual(await check(validDefinition(), withoutDb1()), [])
    })

    it('is TRANSITION_NODE_REMOVAL_UNSAFE while it holds a live lease, and passes once the job is completed', async () => {
      const job = await createJob(db.pool, { nodeId: 'db-1', kind: 'run_build', now: T0 })
      assert.equal(await countLiveLeases(db.pool, 'db-1', T0), 0, 'a queued job is not a lease')
      const leased = await leaseNextJob(db.pool, { nodeId: 'db-1', leaseTokenSha256: token, leaseSeconds: 300 })
      assert.equal(leased?.id, job.id)
      assert.equal(await countLiveLeases(db.pool, 'db-1', at(10)), 1)
      assert.deepEqual(await check(validDefinition(), withoutDb1()), [['TRANSITION_NODE_REMOVAL_UNSAFE', '/nodes']])

      assert.ok(
        await completeJob(db.pool, {
          jobId: job.id,
          nodeId: 'db-1',
          leaseTokenSha256: token,
          status: 'succeeded',
          result: {},
          now: at(20),
        }),
      )
      assert.deepEqual(await check(validDefinition(), withoutDb1()), [])
    })

    it("does not count a lease that expired by the clock, nor another node's holdings", async () => {
      await createJob(db.pool, { nodeId: 'db-1', kind: 'run_build', now: T0 })
      await leaseNextJob(db.pool, { nodeId: 'db-1', leaseTokenSha256: token, leaseSeconds: 300 })
      await allocate('build-1')
      // Lease expiry is the database's judgement (issue 11): time passing is the expiry moving into its past.
      await db.pool.query("UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE status = 'leased'")
      assert.deepEqual(await check(validDefinition(), withoutDb1()), [])
    })
  })

  describe('changing an image or the agent version', () => {
    const newImage = () => {
      const current = validDefinition()
      current.pools.build!.image = 'ubuntu-26.04'
      return current
    }

    it('is TRANSITION_UNPROVEN without a canary proof of that image', async () => {
      assert.deepEqual(await check(validDefinition(), newImage()), [['TRANSITION_UNPROVEN', '/pools/build/image']])
      await recordCanaryProof(db.pool, { kind: 'agentVersion', value: 'ubuntu-26.04', nodeId: 'build-1', provenAt: T0 })
      assert.deepEqual(
        await check(validDefinition(), newImage()),
        [['TRANSITION_UNPROVEN', '/pools/build/image']],
        'a proof of another kind does not count',
      )
    })

    it('passes once a canary proof of exactly that image is recorded; the agent version needs its own', async () => {
      assert.equal(
        await recordCanaryProof(db.pool, { kind: 'image', value: 'ubuntu-26.04', nodeId: 'build-1', provenAt: T0 }),
        true,
      )
      assert.deepEqual(await check(validDefinition(), newImage()), [])

      const both = newImage()
      both.release.version = '1.3.0'
      assert.deepEqual(await check(validDefinition(), both), [['TRANSITION_UNPROVEN', '/release/version']])
      await recordCanaryProof(db.pool, { kind: 'agentVersion', value: '1.3.0', nodeId: 'build-1', provenAt: at(5) })
      assert.deepEqual(await check(validDefinition(), both), [])
    })

    it('keeps the first proof of a revision', async () => {
      assert.equal(
        await recordCanaryProof(db.pool, { kind: 'image', value: 'ubuntu-26.04', nodeId: 'build-1', provenAt: T0 }),
        true,
      )
      assert.equal(
        await recordCanaryProof(db.pool, { kind: 'image', value: 'ubuntu-26.04', nodeId: 'build-2', provenAt: at(60) }),
        false,
      )
      assert.deepEqual(await getCanaryProof(db.pool, 'image', 'ubuntu-26.04'), {
        kind: 'image',
        value: 'ubuntu-26.04',
        nodeId: 'build-1',
        provenAt: T0,
      })
      assert.equal(await isCanaryProven(db.pool, 'image', 'ubuntu-26.05'), false)
    })

    it('the table refuses an unknown kind', async () => {
      await assert.rejects(
        db.pool.query("INSERT INTO canary_proofs (kind, value, node_id) VALUES ('kernel', '6.8', 'build-1')"),
        (error: unknown) => (error as { code?: string }).code === '23514',
      )
    })
  })
})
