// `node admit` and a check that warned (issue 39): refused unless a person accepts each warning by
// name (--accept-warn, repeatable), the accepted ones recorded in the admit event. Real PostgreSQL;
// the checks job's result is what an agent would have reported.
import assert from 'node:assert/strict'

import { admitNode } from '../../../src/lifecycle/node/node-admit.js'
import { listEvents } from '../../../src/store/events.js'
import { recordNodeCapacity } from '../../../src/store/nodes/node-lifecycle.js'
import { getNode, upsertDeclaredNode } from '../../../src/store/nodes/nodes.js'
import { createJob } from '../../../src/store/scheduling/jobs.js'
import { runFleetkit } from '../../support/cli.js'
import { freshDatabasePerTest } from '../../support/postgres.js'

const actor = 'carol@ops'
const WARNED = {
  checks: [
    { id: 'host:br-netfilter', status: 'pass', detail: 'loaded' },
    { id: 'host:data-volume', status: 'warn', detail: 'no data volume is configured' },
    { id: 'agent:clock-skew', status: 'warn', detail: 'no answer from the gateway yet' },
  ],
}

describe('node admit and warning checks (real PostgreSQL)', function () {
  this.timeout(60_000)
  const db = freshDatabasePerTest()

  async function checkedNode(id: string, result: Record<string, unknown>): Promise<void> {
    const q = db().pool
    await upsertDeclaredNode(q, { id, pool: 'database', status: 'active' })
    await q.query('UPDATE nodes SET last_seen_at = now() WHERE id = $1', [id])
    await recordNodeCapacity(q, id, { cpu: 2, memoryMib: 4096, diskGib: 40 })
    const job = await createJob(q, { nodeId: id, kind: 'checks', now: new Date() })
    await q.query(`UPDATE jobs SET status = 'succeeded', result = $2, updated_at = now() WHERE id = $1`, [
      job.id,
      result,
    ])
  }

  it('refuses a node whose checks warned unless every warning is accepted by name, and records them', async () => {
    await checkedNode('db-1', WARNED)
    await assert.rejects(
      admitNode({ pool: db().pool, nodeId: 'db-1', actor }),
      (error: Error & { code?: string; data?: Record<string, unknown> }) => {
        assert.equal(error.code, 'NODE_CHECKS_WARNING')
        assert.deepEqual(error.data?.unaccepted, ['host:data-volume', 'agent:clock-skew'])
        return true
      },
    )
    // One of two accepted: still refused, naming the other.
    await assert.rejects(admitNode({ pool: db().pool, nodeId: 'db-1', actor, acceptWarn: ['host:data-volume'] }), {
      code: 'NODE_CHECKS_WARNING',
      message: /\(agent:clock-skew\)/,
    })
    assert.equal((await getNode(db().pool, 'db-1'))?.schedulable, false, 'nothing written')
    const admitted = await admitNode({
      pool: db().pool,
      nodeId: 'db-1',
      actor,
      acceptWarn: ['host:data-volume', 'agent:clock-skew'],
    })
    assert.equal(admitted.schedulable, true)
    const event = (await listEvents(db().pool, { kind: 'node_admitted' })).at(-1)!
    assert.deepEqual(event.data.accepted_warnings, ['host:data-volume', 'agent:clock-skew'])
    assert.equal(event.data.actor, actor)
  })

  it('a node whose checks all passed needs no --accept-warn, and its event records none', async () => {
    await checkedNode('db-2', { checks: [{ id: 'host:data-volume', status: 'pass', detail: 'mounted' }] })
    await admitNode({ pool: db().pool, nodeId: 'db-2', actor, acceptWarn: ['host:data-volume'] })
    const event = (await listEvents(db().pool, { kind: 'node_admitted' })).at(-1)!
    assert.equal(event.data.accepted_warnings, undefined)
  })

  it('the CLI: refused without --accept-warn (the next command names the flags), admitted with them', async () => {
    await checkedNode('db-3', WARNED)
    const env = { DATABASE_URL: db().url, FLEETKIT_ACTOR: 'dave@ops' }
    const refused = await runFleetkit(['node', 'admit', 'db-3', '--json'], { env })
    assert.notEqual(refused.code, 0)
    assert.equal(refused.json.code, 'NODE_CHECKS_WARNING')
    assert.ok(
      refused.json.actions.some((a: string) =>
        a.startsWith('fleetkit node admit db-3 --accept-warn host:data-volume --accept-warn agent:clock-skew'),
      ),
      refused.json.actions,
    )
    const bad = await runFleetkit(['node', 'admit', 'db-3', '--accept-warn', 'data volume', '--json'], { env })
    assert.equal(bad.json.code, 'USAGE_INVALID')
    const admitted = await runFleetkit(
      ['node', 'admit', 'db-3', '--accept-warn', 'host:data-volume', '--accept-warn', 'agent:clock-skew', '--json'],
      { env },
    )
    assert.equal(admitted.code, 0, admitted.stderr)
    const event = (await listEvents(db().pool, { kind: 'node_admitted' })).at(-1)!
    assert.deepEqual(
      [event.data.accepted_warnings, event.data.actor],
      [['host:data-volume', 'agent:clock-skew'], 'dave@ops'],
    )
  })
})
