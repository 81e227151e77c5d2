// `fleetkit fleet ready` (issue 39): the verdict per criterion against real PostgreSQL, with the
// state a fleet's commands would have written (nodes, checks jobs, sync and drift runs), and the CLI
// through its exit code and --json by schema.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'

import { loadDefinition } from '../../../src/definition/load.js'
import type { Definition } from '../../../src/definition/types.js'
import { type FleetReadyResult, fleetReady, stateReadiness } from '../../../src/lifecycle/view/fleet-ready.js'
import { nodeDriftStates } from '../../../src/lifecycle/view/node-drift.js'
import { packagePath } from '../../../src/package-root.js'
import { recordDriftVerdict } from '../../../src/store/nodes/node-drift.js'
import { upsertDeclaredNode } from '../../../src/store/nodes/nodes.js'
import { createJob } from '../../../src/store/scheduling/jobs.js'
import { createSyncRun, finishSyncRun, setSyncNode } from '../../../src/store/sync/sync-ledger.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { freshDatabasePerTest } from '../../support/postgres.js'

const FLEET = packagePath('examples', 'fleet.yaml')
/** The nodes examples/fleet.yaml declares active (build-2 is drained, build-3 disabled). */
const SERVING = [
  ['app-1', 'application'],
  ['app-2', 'application'],
  ['build-1', 'build'],
  ['db-1', 'database'],
] as const
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

describe('fleet ready: the verdict (real PostgreSQL)', function () {
  this.timeout(60_000)
  const db = freshDatabasePerTest()
  let text: string
  let definition: Definition
  before(async () => {
    text = await readFile(FLEET, 'utf8')
    definition = await loadDefinition(FLEET)
  })
  const verdict = (definitionText = text) => fleetReady({ pool: db().pool, definition, definitionText })
  const failuresOf = (r: FleetReadyResult, id: string) =>
    r.nodes.find((n) => n.nodeId === id)?.failures.map((f) => [f.criterion, f.code]) ?? []

  async function serving(id: string, pool: string): Promise<void> {
    const q = db().pool
    await upsertDeclaredNode(q, { id, pool, status: 'active' })
    await q.query(
      `UPDATE nodes SET schedulable = true, last_seen_at = now(), host_agent_version = '0.1.0', capacity_cpu = 1, capacity_memory_mib = 1024, capacity_disk_gib = 10 WHERE id = $1`,
      [id],
    )
    const job = await createJob(q, { nodeId: id, kind: 'checks', now: new Date() })
    const result = { checks: [{ id: 'host:data-volume', status: 'warn', detail: 'no data volume' }] }
    await q.query(`UPDATE jobs SET status = 'succeeded', result = $2, updated_at = now() WHERE id = $1`, [
      job.id,
      result,
    ])
  }
  /** A run of `kind` over `nodes` ending each in `state`, for the definition `definitionText`. */
  async function run(
    kind: 'sync' | 'drift',
    nodes: readonly string[],
    state: 'converged' | 'changed' | 'failed',
    definitionText = text,
    tags: string[] = [],
  ): Promise<number> {
    const q = db().pool
    const r = await createSyncRun(q, {
      kind,
      revision: null,
      definitionSha256: sha256(definitionText),
      planHash: sha256(`${kind}${nodes.join()}${Math.random()}`),
      plan: { tags },
      startedBy: 'test',
      pid: process.pid,
      nodes: nodes.map((nodeId) => ({ nodeId, phase: 'fleet' as const, state: 'pending' as const })),
    })
    for (const nodeId of nodes)
      await setSyncNode(q, r.id, nodeId, {
        state,
        agentVersion: '0.1.0',
        ...(state === 'failed' ? { code: 'SSH_HOST_KEY_MISMATCH' } : {}),
      })
    await finishSyncRun(q, r.id, state === 'failed' ? 'partial' : kind === 'drift' ? 'drifted' : 'converged')
    return r.id
  }
  async function readyFleet(): Promise<void> {
    for (const [id, pool] of SERVING) await serving(id, pool)
    await run(
      'sync',
      SERVING.map(([id]) => id),
      'converged',
    )
  }

  it('an empty state: every node declared active is unknown; drained and disabled ones do not count', async () => {
    const r = await verdict()
    assert.equal(r.ready, false)
    assert.deepEqual(
      r.nodes.map((n) => [n.nodeId, n.status, n.failures[0]?.code]),
      SERVING.map(([id]) => [id, 'unknown', 'NODE_UNKNOWN']),
    )
    // The next command runs as printed: no placeholder, no flag `node provision` lacks (the pool,
    // region and type come from fleet.yaml).
    assert.equal(
      r.nodes.find((n) => n.nodeId === 'app-2')?.failures[0]?.next,
      'fleetkit node provision app-2   (or fleetkit seed app-2 --kind agent)',
    )
    assert.deepEqual(
      r.pools.map((p) => [p.pool, p.ready, p.nodes]),
      [
        ['application', false, 2],
        ['build', false, 1],
        ['database', false, 1],
      ],
    )
  })

  it('ready when every serving node is admitted, healthy, converged with this definition, undrifted and on release.version', async () => {
    await readyFleet()
    // A drained or retired node of the state does not serve either.
    await upsertDeclaredNode(db().pool, { id: 'build-2', pool: 'build', status: 'draining' })
    const r = await verdict()
    assert.deepEqual(
      r.nodes.filter((n) => !n.ready),
      [],
    )
    assert.equal(r.ready, true)
    assert.equal(r.acceptedAgentVersion, '0.1.0')
    assert.equal(r.definitionSha256, sha256(text))
    assert.ok(r.pools.every((p) => p.ready))
  })

  it('each criterion fails on its own, with its code and the next command', async () => {
    await readyFleet()
    const q = db().pool
    await q.query('UPDATE nodes SET schedulable = false WHERE id = $1', ['app-2'])
    await q.query(`UPDATE nodes SET status = 'unhealthy' WHERE id = $1`, ['db-1'])
    await q.query(`UPDATE nodes SET host_agent_version = '0.0.9' WHERE id = $1`, ['app-1'])
    await run('drift', ['build-1'], 'changed')
    const r = await verdict()
    assert.equal(r.ready, false)
    assert.deepEqual(failuresOf(r, 'app-2'), [['admitted', 'NODE_NOT_SCHEDULABLE']])
    assert.equal(r.nodes.find((n) => n.nodeId === 'app-2')?.failures[0]?.next, 'fleetkit node admit app-2')
    assert.deepEqual(failuresOf(r, 'db-1'), [['healthy', 'NODE_SILENT']])
    assert.deepEqual(failuresOf(r, 'app-1'), [['agent_version', 'AGENT_VERSION_NOT_ACCEPTED']])
    assert.deepEqual(failuresOf(r, 'build-1'), [['drift', 'DRIFT_DETECTED']])
    assert.deepEqual(
      r.pools.map((p) => [p.pool, p.ready, p.readyNodes, p.nodes]),
      [
        ['application', false, 0, 2],
        ['build', false, 0, 1],
        ['database', false, 0, 1],
      ],
    )
    // A sync after the drift converges it again: no longer drifted.
    await run('sync', ['build-1'], 'converged')
    assert.deepEqual(failuresOf(await verdict(), 'build-1'), [])
  })

  it('a node pinned to an agent version of its own is judged against its pin, not release.version', async () => {
    await readyFleet()
    const q = db().pool
    // The canary proving the next release: build-1 pinned to 0.2.0, which it runs; app-1 pinned too, but behind.
    const pinned: Definition = {
      ...definition,
      nodes: definition.nodes.map((n) =>
        n.id === 'build-1' || n.id === 'app-1' ? { ...n, agentVersion: '0.2.0' } : n,
      ),
    }
    await q.query(`UPDATE nodes SET host_agent_version = '0.2.0' WHERE id = $1`, ['build-1'])
    const r = await fleetReady({ pool: q, definition: pinned, definitionText: text })
    assert.deepEqual(failuresOf(r, 'build-1'), [])
    assert.deepEqual(failuresOf(r, 'app-1'), [['agent_version', 'AGENT_VERSION_NOT_ACCEPTED']])
    assert.match(
      r.nodes.find((n) => n.nodeId === 'app-1')!.failures[0]!.detail,
      /runs agent 0\.1\.0, accepted: 0\.2\.0/,
    )
    assert.deepEqual(failuresOf(r, 'app-2'), [], 'unpinned nodes still run release.version')
  })

  it("the agent's drift: drifted fails drift naming the parts; a changed definition is behind, not drifted", async () => {
    await readyFleet()
    const q = db().pool
    const verdictOf = (state: 'in_sync' | 'drifted', parts: string[]) => ({
      state,
      parts,
      reason: null,
      digest: 'a'.repeat(64),
      fingerprintRunId: null,
      hostCheckedAt: null,
    })
    await recordDriftVerdict(q, 'app-1', verdictOf('drifted', ['nft', 'sshd']), new Date())
    await recordDriftVerdict(q, 'app-2', verdictOf('in_sync', []), new Date())
    const r = await verdict()
    assert.deepEqual(failuresOf(r, 'app-1'), [['drift', 'DRIFT_DETECTED']])
    assert.match(r.nodes.find((n) => n.nodeId === 'app-1')!.failures[0]!.detail, /its agent reports nft, sshd differ/)
    assert.deepEqual(failuresOf(r, 'app-2'), [])
    const states = async (definitionText: string) =>
      new Map(
        (await nodeDriftStates(q, { definitionSha256: sha256(definitionText) })).map((s) => [
          s.nodeId,
          [s.drift, s.parts.join(','), s.behind, s.reason],
        ]),
      )
    const now = await states(text)
    assert.deepEqual(now.get('app-1'), ['drifted', 'nft,sshd', false, null])
    assert.deepEqual(now.get('app-2'), ['in_sync', '', false, null])
    assert.deepEqual(now.get('db-1'), ['unknown', '', false, 'not_reported'])
    // The definition changed and nobody synced: behind, and still only as drifted as the agent says.
    const edited = await states(`${text}\n# edited\n`)
    assert.deepEqual(edited.get('app-2'), ['in_sync', '', true, null])
    assert.deepEqual(edited.get('app-1'), ['drifted', 'nft,sshd', true, null])
    // Without a definition: the last finished sync's is the current one.
    assert.equal((await nodeDriftStates(q)).find((s) => s.nodeId === 'app-2')?.behind, false)
  })

  it('converged: never synced, a failed last attempt (its code), another definition; and failing checks are not healthy', async () => {
    await readyFleet()
    const changed = `${text}\n# edited\n`
    assert.deepEqual(failuresOf(await verdict(changed), 'db-1'), [['converged', 'NODE_NOT_CONVERGED']])
    await run('sync', ['db-1'], 'failed')
    const failed = (await verdict()).nodes.find((n) => n.nodeId === 'db-1')!.failures
    assert.deepEqual(
      failed.map((f) => [f.criterion, f.code, f.next]),
      [['converged', 'NODE_NOT_CONVERGED', 'fleetkit runbook SSH_HOST_KEY_MISMATCH']],
    )
    // A provisioned node of a declared pool that nothing declares serves too: never synced, not admitted.
    await upsertDeclaredNode(db().pool, { id: 'build-9', pool: 'build', status: 'active' })
    assert.deepEqual(failuresOf(await verdict(), 'build-9'), [
      ['admitted', 'NODE_NOT_SCHEDULABLE'],
      ['converged', 'NODE_NOT_CONVERGED'],
      ['agent_version', 'AGENT_VERSION_NOT_ACCEPTED'],
    ])
    const job = await createJob(db().pool, { nodeId: 'app-1', kind: 'checks', now: new Date() })
    await db().pool.query(`UPDATE jobs SET status = 'succeeded', result = $2, updated_at = now() WHERE id = $1`, [
      job.id,
      { checks: [{ id: 'host:firewall', status: 'fail', code: 'FIREWALL_RULES_MISSING', detail: 'no table' }] },
    ])
    assert.deepEqual(failuresOf(await verdict(), 'app-1'), [['healthy', 'NODE_CHECKS_FAILING']])
  })

  it('a run narrowed by --tags converges no definition: the last whole run that converged the node decides', async () => {
    await readyFleet()
    const changed = `${text}\n# edited\n`
    // Before, a `--tags firewall` run on the new definition made db-1 count as converged on all of it.
    await run('sync', ['db-1'], 'converged', changed, ['firewall'])
    const narrowed = (await verdict(changed)).nodes.find((n) => n.nodeId === 'db-1')!.failures
    assert.deepEqual(
      narrowed.map((f) => [f.criterion, f.code]),
      [['converged', 'NODE_NOT_CONVERGED']],
    )
    assert.match(narrowed[0]!.detail, /applied another definition/)
    // On the definition the last whole run converged, a tagged run after it changes nothing.
    assert.deepEqual(failuresOf(await verdict(), 'db-1'), [])
    // A whole run on the new definition converges it.
    await run('sync', ['db-1'], 'converged', changed)
    assert.deepEqual(failuresOf(await verdict(changed), 'db-1'), [])
    // A whole run that failed, then a tagged one: nothing proves any definition on it.
    await run('sync', ['db-1'], 'failed', changed)
    await run('sync', ['db-1'], 'converged', changed, ['firewall'])
    const unproven = (await verdict(changed)).nodes.find((n) => n.nodeId === 'db-1')!.failures
    assert.deepEqual(
      unproven.map((f) => [f.criterion, f.code]),
      [['converged', 'NODE_NOT_CONVERGED']],
    )
    assert.match(unproven[0]!.detail, /ran some roles only \(--tags\)/)
  })

  it('a lost node is neither admitted nor healthy', async () => {
    await readyFleet()
    await db().pool.query(`UPDATE nodes SET status = 'lost', schedulable = false, lost_at = now() WHERE id = $1`, [
      'db-1',
    ])
    assert.deepEqual(failuresOf(await verdict(), 'db-1'), [
      ['admitted', 'NODE_LOST'],
      ['healthy', 'NODE_LOST'],
    ])
  })

  it('the status page verdict judges from the state alone: the last finished sync is the current definition', async () => {
    await readyFleet()
    assert.equal((await stateReadiness(db().pool)).ready, true)
    await run('sync', ['app-1'], 'converged', `${text}\n# a newer definition\n`)
    const r = await stateReadiness(db().pool)
    assert.equal(r.ready, false)
    assert.deepEqual(failuresOf(r, 'db-1'), [['converged', 'NODE_NOT_CONVERGED']])
    assert.deepEqual(failuresOf(r, 'app-1'), [])
  })

  it('the CLI: exit 0 and --json by schema when ready; FLEET_NOT_READY, exit 3, the verdict in data when not', async () => {
    await readyFleet()
    const env = { DATABASE_URL: db().url }
    const ready = await runFleetkit(['fleet', 'ready', '--definition', FLEET, '--json'], { env })
    assert.equal(ready.code, 0, ready.stderr)
    assertMatchesOutputSchema('fleet-ready', ready.json)
    assert.equal(ready.json.result.ready, true)
    await db().pool.query('UPDATE nodes SET schedulable = false WHERE id = $1', ['db-1'])
    const not = await runFleetkit(['fleet', 'ready', '--definition', FLEET, '--json'], { env })
    assert.equal(not.code, 3)
    assertMatchesOutputSchema('fleet-ready', not.json)
    assert.equal(not.json.code, 'FLEET_NOT_READY')
    assert.equal(not.json.data.verdict.ready, false)
    assert.ok(not.json.actions.includes(`fleetkit node admit --definition ${FLEET} db-1`), not.json.actions)
    const human = await runFleetkit(['fleet', 'ready', '--definition', FLEET], { env })
    assert.equal(human.code, 3)
    assert.match(human.stdout, /pool database: NOT READY \(0 of 1 node\(s\)/)
    assert.match(
      human.stdout,
      /db-1: admitted NODE_NOT_SCHEDULABLE: active, not admitted; next: fleetkit node admit db-1/,
    )
    assert.match(human.stdout, /pool build: ready/)
    assert.match(human.stderr, /FLEET_NOT_READY/)
  })
})
