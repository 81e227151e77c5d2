// Stateful pools (issue 39) against real PostgreSQL: a lost node of a stateful pool keeps its
// allocations, stranded (capacity held, nothing scheduled on it, the event says who decides); a
// stateless pool's are released as before; `release --stranded` asks first and records the actor;
// a node heard from again gets them back. The sweep is run by the test, on the database's clock.
import assert from 'node:assert/strict'

import { admitNode } from '../../../src/lifecycle/node/node-admit.js'
import { releaseStranded } from '../../../src/lifecycle/node/allocations.js'
import { decommissionNode } from '../../../src/lifecycle/node/node-decommission.js'
import { nodeList, nodeShow } from '../../../src/lifecycle/view/fleet-view.js'
import { runSweep } from '../../../src/lifecycle/node/sweep.js'
import { listEvents } from '../../../src/store/events.js'
import { recordNodeCapacity } from '../../../src/store/nodes/node-lifecycle.js'
import { upsertDeclaredNode } from '../../../src/store/nodes/nodes.js'
import { recordPoolPolicies } from '../../../src/store/nodes/pool-policies.js'
import { listAllocations, releaseAllocationById, reserveAllocation } from '../../../src/store/scheduling/allocations.js'
import { fixedClock, systemClock } from '../../../src/config/clock.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { freshDatabasePerTest } from '../../support/postgres.js'

const THRESHOLDS = { unhealthyAfterSeconds: 90, lostAfterSeconds: 300 }
const actor = 'alice@ops'
const yes = async () => undefined

describe('stateful pools: stranded allocations on loss (real PostgreSQL)', function () {
  this.timeout(60_000)
  const db = freshDatabasePerTest()

  /** An active, admitted node with one allocation of 1 cpu, 1024 MiB, 10 GiB. */
  async function servingNode(id: string, pool: string): Promise<string> {
    const q = db().pool
    await upsertDeclaredNode(q, { id, pool, status: 'active' })
    await q.query('UPDATE nodes SET last_seen_at = now() WHERE id = $1', [id])
    await recordNodeCapacity(q, id, { cpu: 2, memoryMib: 4096, diskGib: 40 })
    await admitNode({ pool: q, nodeId: id, actor })
    const a = await reserveAllocation(q, {
      nodeId: id,
      owner: `${pool}-app`,
      cpu: 1,
      memoryMib: 1024,
      diskGib: 10,
      actor,
    })
    return a.id
  }
  const silence = (id: string, seconds: number) =>
    db().pool.query('UPDATE nodes SET last_seen_at = now() - make_interval(secs => $2) WHERE id = $1', [id, seconds])
  const statusOf = async (id: string) => (await listAllocations(db().pool, {})).find((a) => a.id === id)?.status

  beforeEach(async () => {
    await recordPoolPolicies(db().pool, { database: { stateful: true }, build: {} })
  })

  it('a stateful pool strands its lost node’s allocations; a stateless pool releases them', async () => {
    const dbAlloc = await servingNode('db-1', 'database')
    const buildAlloc = await servingNode('build-1', 'build')
    await silence('db-1', 400)
    await silence('build-1', 400)
    const swept = await runSweep(db().pool, THRESHOLDS)
    const byNode = Object.fromEntries(swept.lost.map((l) => [l.nodeId, l]))
    assert.deepEqual(
      [byNode['db-1']?.strandedAllocations, byNode['db-1']?.releasedAllocations],
      [1, 0],
      'db-1: stranded, not released',
    )
    assert.deepEqual([byNode['build-1']?.strandedAllocations, byNode['build-1']?.releasedAllocations], [0, 1])
    assert.equal(await statusOf(dbAlloc), 'stranded')
    assert.equal(await statusOf(buildAlloc), 'released')

    const lost = (await listEvents(db().pool, { kind: 'node_lost' })).find((e) => e.nodeId === 'db-1')!
    assert.equal(lost.data.stranded_allocations, 1)
    assert.equal(lost.data.released_allocations, 0)
    assert.match(String(lost.data.decision), /fleetkit alloc release --stranded db-1 --yes/)
    const view = (await nodeList(db().pool)).nodes.find((n) => n.id === 'db-1')!
    assert.equal(view.lost?.stateful, true)
    assert.equal(view.lost?.strandedAllocations, 1)
    // The stranded allocation's capacity is still held on the node.
    assert.deepEqual([view.reserved.cpu, view.reserved.allocations], [1, 1])

    const shown = await nodeShow(db().pool, 'db-1')
    assert.deepEqual(
      shown.allocations.map((a) => [a.id, a.status]),
      [[dbAlloc, 'stranded']],
    )
    // A replayed sweep changes nothing.
    assert.deepEqual((await runSweep(db().pool, THRESHOLDS)).lost, [])
  })

  it('nothing is placed on a node with stranded allocations, and it cannot be decommissioned before a person decides', async () => {
    await servingNode('db-1', 'database')
    await silence('db-1', 400)
    await runSweep(db().pool, THRESHOLDS)
    await assert.rejects(
      reserveAllocation(db().pool, { nodeId: 'db-1', owner: 'x', cpu: 0.5, memoryMib: 1, diskGib: 1, actor }),
      { code: 'NODE_NOT_SCHEDULABLE' },
    )
    // The refusal calls the allocation what it is and names what ends it: a person's release, not a wait.
    const refused = (error: { code?: string; message?: string; actions?: string[] }) => {
      assert.equal(error.code, 'NODE_HAS_ALLOCATIONS')
      assert.match(error.message!, /1 stranded allocation\(s\)/)
      assert.doesNotMatch(error.message!, /active allocation/)
      assert.ok(error.actions!.includes('fleetkit alloc release --stranded db-1 --yes   (gives up what they held)'))
      assert.ok(!error.actions!.some((a) => a.includes('--wait')), error.actions!.join(' | '))
      return true
    }
    await assert.rejects(
      decommissionNode({ pool: db().pool, nodeId: 'db-1', actor, clock: systemClock, confirm: yes }),
      refused,
    )
    // --wait is refused at once: stranded allocations never end by themselves.
    const clock = fixedClock(new Date('2026-12-07T22:00:00Z'))
    let slept = 0
    await assert.rejects(
      decommissionNode({
        pool: db().pool,
        nodeId: 'db-1',
        actor,
        clock,
        confirm: yes,
        waitSeconds: 600,
        sleep: async (ms) => {
          slept += ms
          clock.advance(ms)
        },
      }),
      refused,
    )
    assert.equal(slept, 0, 'no wait for what no wait ends')
  })

  it('release --stranded asks first (no --yes: nothing changes), then releases with the actor in each event', async () => {
    const id = await servingNode('db-1', 'database')
    await silence('db-1', 400)
    await runSweep(db().pool, THRESHOLDS)
    // A plain release names the stranded path instead.
    await assert.rejects(releaseAllocationById(db().pool, id, actor), {
      code: 'ALLOCATION_UNKNOWN',
      message: /stranded/,
    })
    const refuse = async () => {
      throw Object.assign(new Error('needs --yes'), { code: 'CONFIRMATION_REQUIRED' })
    }
    await assert.rejects(releaseStranded({ pool: db().pool, target: 'db-1', actor, confirm: refuse }), {
      code: 'CONFIRMATION_REQUIRED',
    })
    assert.equal(await statusOf(id), 'stranded', 'refused: still stranded')

    const asked: string[] = []
    const result = await releaseStranded({
      pool: db().pool,
      target: 'db-1',
      actor,
      confirm: async (r) => {
        asked.push(r.what)
      },
    })
    assert.match(asked[0]!, /release 1 stranded allocation\(s\) on db-1/)
    assert.deepEqual(
      result.released.map((a) => [a.id, a.status, a.releaseReason]),
      [[id, 'released', 'stranded_released']],
    )
    const released = (await listEvents(db().pool, { kind: 'allocation_released' })).at(-1)!
    assert.deepEqual(
      [released.data.allocation_id, released.data.actor, released.data.reason],
      [id, actor, 'stranded_released'],
    )
    await assert.rejects(releaseStranded({ pool: db().pool, target: 'db-1', actor, confirm: yes }), {
      code: 'ALLOCATION_UNKNOWN',
    })
    // Decided: the node can now be retired.
    const retired = await decommissionNode({ pool: db().pool, nodeId: 'db-1', actor, clock: systemClock, confirm: yes })
    assert.equal(retired.to, 'retired')
  })

  it('one stranded allocation can be released by its id', async () => {
    const id = await servingNode('db-1', 'database')
    await reserveAllocation(db().pool, { nodeId: 'db-1', owner: 'other', cpu: 0.5, memoryMib: 1, diskGib: 1, actor })
    await silence('db-1', 400)
    await runSweep(db().pool, THRESHOLDS)
    const result = await releaseStranded({ pool: db().pool, target: id, actor, confirm: yes })
    assert.deepEqual(
      result.released.map((a) => a.id),
      [id],
    )
    assert.equal((await listAllocations(db().pool, { status: 'stranded' })).length, 1)
  })

  it('a lost node heard from again gets its stranded allocations back (an event), and admit takes it back', async () => {
    const id = await servingNode('db-1', 'database')
    await silence('db-1', 400)
    await runSweep(db().pool, THRESHOLDS)
    // Not heard from since: a sweep leaves them stranded.
    assert.deepEqual((await runSweep(db().pool, THRESHOLDS)).resumed, [])
    await db().pool.query('UPDATE nodes SET last_seen_at = now() WHERE id = $1', ['db-1'])
    const swept = await runSweep(db().pool, THRESHOLDS)
    assert.deepEqual(swept.resumed, [{ nodeId: 'db-1', allocationIds: [id] }])
    assert.equal(await statusOf(id), 'active')
    const resumed = await listEvents(db().pool, { kind: 'allocations_resumed' })
    assert.deepEqual(
      resumed.map((e) => [e.nodeId, e.data.allocations]),
      [['db-1', 1]],
    )
    // Still lost and unschedulable until a person admits it; then it is back with its allocation counted.
    await assert.rejects(
      reserveAllocation(db().pool, { nodeId: 'db-1', owner: 'x', cpu: 0.5, memoryMib: 1, diskGib: 1, actor }),
      { code: 'NODE_NOT_SCHEDULABLE' },
    )
    await admitNode({ pool: db().pool, nodeId: 'db-1', actor })
    await assert.rejects(
      reserveAllocation(db().pool, { nodeId: 'db-1', owner: 'x', cpu: 1.5, memoryMib: 1, diskGib: 1, actor }),
      { code: 'ALLOCATION_OVER_CAPACITY' },
    )
  })

  it('a node admitted back before the sweep saw it return still gets its stranded allocations back', async () => {
    const id = await servingNode('db-1', 'database')
    await silence('db-1', 400)
    await runSweep(db().pool, THRESHOLDS)
    await db().pool.query('UPDATE nodes SET last_seen_at = now() WHERE id = $1', ['db-1'])
    await admitNode({ pool: db().pool, nodeId: 'db-1', actor })
    assert.equal(await statusOf(id), 'stranded')
    assert.deepEqual((await runSweep(db().pool, THRESHOLDS)).resumed, [{ nodeId: 'db-1', allocationIds: [id] }])
    assert.equal(await statusOf(id), 'active')
  })

  it('a pool never recorded counts as stateless', async () => {
    const id = await servingNode('misc-1', 'misc')
    await silence('misc-1', 400)
    await runSweep(db().pool, THRESHOLDS)
    assert.equal(await statusOf(id), 'released')
  })

  it('the CLI: alloc release --stranded without --yes and no terminal is refused; with --yes it releases (--json by schema)', async () => {
    const id = await servingNode('db-1', 'database')
    await silence('db-1', 400)
    await runSweep(db().pool, THRESHOLDS)
    const env = { DATABASE_URL: db().url, FLEETKIT_ACTOR: 'bob@ops' }
    const listed = await runFleetkit(['alloc', 'list', '--status', 'stranded', '--json'], { env })
    assert.equal(listed.code, 0, listed.stderr)
    assertMatchesOutputSchema('alloc-list', listed.json)
    assert.deepEqual(
      listed.json.result.allocations.map((a: { id: string; status: string }) => [a.id, a.status]),
      [[id, 'stranded']],
    )
    const refused = await runFleetkit(['alloc', 'release', '--stranded', 'db-1', '--json'], { env })
    assert.notEqual(refused.code, 0)
    assert.equal(refused.json.code, 'CONFIRMATION_REQUIRED')
    assert.match(refused.json.message, /release 1 stranded allocation\(s\) on db-1/)
    assert.equal(refused.json.actions[0], 'fleetkit alloc release --stranded db-1 --yes')
    assert.equal(await statusOf(id), 'stranded')
    const neither = await runFleetkit(['alloc', 'release', '--json'], { env })
    assert.equal(neither.json.code, 'USAGE_INVALID')

    const released = await runFleetkit(['alloc', 'release', '--stranded', 'db-1', '--yes', '--json'], { env })
    assert.equal(released.code, 0, released.stderr)
    assertMatchesOutputSchema('alloc-release', released.json)
    assert.deepEqual(
      released.json.result.released.map((a: { id: string }) => a.id),
      [id],
    )
    const event = (await listEvents(db().pool, { kind: 'allocation_released' })).at(-1)!
    assert.equal(event.data.actor, 'bob@ops')
    const human = await runFleetkit(['node', 'list'], { env })
    assert.match(human.stdout, /stateful pool: none stranded now/)
  })
})
