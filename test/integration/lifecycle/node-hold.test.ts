// `fleetkit node hold` / `node release` (issue 39): who, why and when recorded, the events, the hold
// in node list and node show, idempotent re-runs and refusals that write nothing, on real PostgreSQL.
import assert from 'node:assert/strict'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { holdNode, releaseNode } from '../../../src/lifecycle/node/node-hold.js'
import { nodeList, nodeShow } from '../../../src/lifecycle/view/fleet-view.js'
import { listEvents } from '../../../src/store/events.js'
import { getNode, setNodeStatus, upsertDeclaredNode } from '../../../src/store/nodes/nodes.js'
import { listNodeHolds } from '../../../src/store/nodes/node-holds.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { freshDatabasePerTest } from '../../support/postgres.js'

describe('node hold and node release (real PostgreSQL)', function () {
  this.timeout(60_000)
  const db = freshDatabasePerTest()
  const actor = 'ops@laptop'

  async function refusal(promise: Promise<unknown>): Promise<FleetkitError> {
    const error = await promise.then(
      () => assert.fail('expected a refusal'),
      (e: unknown) => e,
    )
    assert.ok(error instanceof FleetkitError, String(error))
    return error
  }

  it('holds with who, why and when; a second hold changes nothing; release ends it; both are events', async () => {
    const pool = db().pool
    await upsertDeclaredNode(pool, { id: 'web-1', pool: 'web', status: 'active' })
    await pool.query('UPDATE nodes SET schedulable = true WHERE id = $1', ['web-1'])
    const before = await getNode(pool, 'web-1')
    const held = await holdNode({ pool, nodeId: 'web-1', actor, reason: '  kernel debugging, ticket 4711 ' })
    assert.equal(held.changed, true)
    assert.equal(held.hold?.reason, 'kernel debugging, ticket 4711')
    assert.equal(held.hold?.heldBy, actor)
    assert.match(held.message, /reconcile leaves it alone/)
    const again = await holdNode({ pool, nodeId: 'web-1', actor: 'someone@else', reason: 'another reason' })
    assert.equal(again.changed, false)
    assert.equal(again.hold?.heldBy, actor, 'the first hold stays')
    assert.match(again.message, /already held by ops@laptop.*release web-1, then hold it again/)
    // A hold changes neither status nor admission.
    const after = await getNode(pool, 'web-1')
    assert.equal(after?.status, before?.status)
    assert.equal(after?.schedulable, before?.schedulable)

    const listed = await nodeList(pool)
    assert.equal(listed.nodes[0]?.hold?.reason, 'kernel debugging, ticket 4711')
    const shown = await nodeShow(pool, 'web-1')
    assert.equal(shown.node.hold?.heldBy, actor)

    const released = await releaseNode({ pool, nodeId: 'web-1', actor: 'lead@desk' })
    assert.equal(released.changed, true)
    assert.equal(released.hold, null)
    assert.match(released.message, /released by lead@desk \(held by ops@laptop since .*: kernel debugging/)
    assert.equal((await releaseNode({ pool, nodeId: 'web-1', actor })).changed, false)
    assert.deepEqual(await listNodeHolds(pool), [])
    assert.equal((await nodeShow(pool, 'web-1')).node.hold, null)

    const events = (await listEvents(pool, { nodeId: 'web-1' })).filter((e) => e.kind.startsWith('node_'))
    assert.deepEqual(
      events.map((e) => e.kind),
      ['node_held', 'node_released'],
    )
    assert.deepEqual(events[0]?.data, { reason: 'kernel debugging, ticket 4711', actor, status: 'active' })
    assert.equal(events[1]?.data.held_by, actor)
    assert.equal(events[1]?.data.actor, 'lead@desk')
  })

  it('refuses an empty or multi-line reason, an unknown node and a retired one, writing nothing', async () => {
    const pool = db().pool
    await upsertDeclaredNode(pool, { id: 'web-1', pool: 'web', status: 'active' })
    for (const reason of ['   ', 'two\nlines', 'x'.repeat(501)])
      assert.equal((await refusal(holdNode({ pool, nodeId: 'web-1', actor, reason }))).code, 'USAGE_INVALID')
    assert.equal((await refusal(holdNode({ pool, nodeId: 'web-9', actor, reason: 'r' }))).code, 'NODE_UNKNOWN')
    await setNodeStatus(pool, 'web-1', 'retired')
    assert.equal((await refusal(holdNode({ pool, nodeId: 'web-1', actor, reason: 'r' }))).code, 'NODE_STATE_CONFLICT')
    assert.deepEqual(await listNodeHolds(pool), [])
    assert.deepEqual(
      (await listEvents(pool)).filter((e) => e.kind === 'node_held'),
      [],
    )
  })

  it('the CLI: --json by schema, FLEETKIT_ACTOR recorded, the hold in node list and node show', async () => {
    const pool = db().pool
    await upsertDeclaredNode(pool, { id: 'web-1', pool: 'web', status: 'active' })
    const env = { DATABASE_URL: db().url, FLEETKIT_ACTOR: 'cli-tester' }
    const hold = await runFleetkit(['node', 'hold', 'web-1', '--reason', 'disk swap', '--json'], { env })
    assert.equal(hold.code, 0, hold.stderr)
    assertMatchesOutputSchema('node-hold', hold.json)
    assert.equal(hold.json.result.hold.heldBy, 'cli-tester')
    const list = await runFleetkit(['node', 'list'], { env })
    assert.match(list.stdout, /held by cli-tester since .*: disk swap/)
    const show = await runFleetkit(['node', 'show', 'web-1', '--json'], { env })
    assertMatchesOutputSchema('node-show', show.json)
    assert.equal(show.json.result.node.hold.reason, 'disk swap')
    const release = await runFleetkit(['node', 'release', 'web-1', '--json'], { env })
    assert.equal(release.code, 0, release.stderr)
    assertMatchesOutputSchema('node-release', release.json)
    assert.equal(release.json.result.changed, true)
    const missing = await runFleetkit(['node', 'hold', 'web-1'], { env })
    assert.equal(missing.code, 2, 'no --reason: a usage error')
  })
})
