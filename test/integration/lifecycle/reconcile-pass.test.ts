// `fleetkit reconcile`'s passes against real PostgreSQL: selection from the recorded sync and drift runs,
// the canary first and at most N per run, the hourly budget read back from the ledger (a restart does
// not reset it), the stop on the first failure and its --clear, holds, and the one-at-a-time lock. The
// runner stands in for Ansible only: each of its runs is a real ledger run (actor reconcile) whose node
// states the test chooses. The host test (test/integration/hosts/reconcile.test.ts) runs real ones.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { fixedClock } from '../../../src/config/clock.js'
import { loadDefinition } from '../../../src/definition/load.js'
import type { Definition } from '../../../src/definition/types.js'
import { holdNode } from '../../../src/lifecycle/node/node-hold.js'
import {
  type PassOptions,
  RECONCILE_ACTOR,
  type ReconcileRunReport,
  reconcilePass,
} from '../../../src/lifecycle/reconcile/reconcile-pass.js'
import { clearReconcile } from '../../../src/lifecycle/reconcile/reconcile-stop.js'
import { runReconcile } from '../../../src/lifecycle/reconcile/reconcile.js'
import { packagePath } from '../../../src/package-root.js'
import { withSessionLock } from '../../../src/store/advisory-lock.js'
import { listEvents } from '../../../src/store/events.js'
import { upsertDeclaredNode } from '../../../src/store/nodes/nodes.js'
import { openReconcileStop, RECONCILE_LOCK_KEY, recordReconcileStop } from '../../../src/store/sync/reconcile-stops.js'
import {
  createSyncRun,
  finishSyncRun,
  type NodeSyncState,
  setSyncNode,
  type SyncOutcome,
} from '../../../src/store/sync/sync-ledger.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { freshDatabasePerTest } from '../../support/postgres.js'

const FLEET = packagePath('examples', 'fleet.yaml')
/** The nodes examples/fleet.yaml declares active; its canary is build-1. */
const SERVING = [
  ['app-1', 'application'],
  ['app-2', 'application'],
  ['build-1', 'build'],
  ['db-1', 'database'],
] as const
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

describe('reconcile passes (real PostgreSQL, a ledger-writing runner)', function () {
  this.timeout(60_000)
  const db = freshDatabasePerTest()
  let text: string
  let definition: Definition
  before(async () => {
    text = await readFile(FLEET, 'utf8')
    definition = await loadDefinition(FLEET)
  })

  /** A run in the ledger: `kind` over `nodes`, each ending in its state, for `definitionText`. */
  async function ledgerRun(
    kind: 'sync' | 'drift',
    startedBy: string,
    states: Record<string, NodeSyncState>,
    definitionText = text,
  ): Promise<ReconcileRunReport> {
    const q = db().pool
    const nodes = Object.keys(states)
    const r = await createSyncRun(q, {
      kind,
      revision: null,
      definitionSha256: sha256(definitionText),
      planHash: sha256(`${kind}${nodes.join()}${Math.random()}`),
      plan: {},
      startedBy,
      pid: process.pid,
      nodes: nodes.map((nodeId) => ({ nodeId, phase: 'fleet' as const, state: 'pending' as const })),
    })
    for (const [nodeId, state] of Object.entries(states))
      await setSyncNode(q, r.id, nodeId, {
        state,
        agentVersion: '0.1.0',
        ...(state === 'failed' ? { code: 'SYNC_NODE_FAILED', message: 'a task failed' } : {}),
      })
    const bad = Object.values(states).some((s) => s === 'failed')
    const drifted = Object.values(states).some((s) => s === 'changed')
    const outcome: SyncOutcome = bad ? 'partial' : kind === 'drift' ? (drifted ? 'drifted' : 'no_drift') : 'converged'
    await finishSyncRun(q, r.id, outcome)
    return {
      runId: r.id,
      outcome,
      nodes: Object.entries(states).map(([node, state]) => ({ node, state, code: null, message: null })),
    }
  }

  /** Every declared active node admitted, heartbeating, on 0.1.0 and converged by a person's sync of this definition. */
  async function convergedFleet(): Promise<void> {
    const q = db().pool
    for (const [id, pool] of SERVING) {
      await upsertDeclaredNode(q, { id, pool, status: 'active' })
      await q.query(
        `UPDATE nodes SET schedulable = true, last_seen_at = now(), host_agent_version = '0.1.0' WHERE id = $1`,
        [id],
      )
    }
    await ledgerRun('sync', 'ops@desk', Object.fromEntries(SERVING.map(([id]) => [id, 'converged' as const])))
  }

  /** A runner whose syncs (of `definitionText`) converge every node unless `fails` names it; every call is recorded. */
  function runner(fails: ReadonlySet<string> = new Set(), definitionText = text) {
    const calls: string[][] = []
    const drifts: string[][] = []
    return {
      calls,
      drifts,
      checkDrift: async (nodes: readonly string[]) => {
        drifts.push([...nodes])
        return ledgerRun('drift', RECONCILE_ACTOR, Object.fromEntries(nodes.map((n) => [n, 'converged' as const])))
      },
      sync: async (nodes: readonly string[]) => {
        calls.push([...nodes])
        return ledgerRun(
          'sync',
          RECONCILE_ACTOR,
          Object.fromEntries(nodes.map((n) => [n, fails.has(n) ? ('failed' as const) : ('changed' as const)])),
          definitionText,
        )
      },
    }
  }

  const clock = fixedClock(new Date())
  beforeEach(() => clock.set(new Date()))
  const lines: string[] = []
  function options(r: PassOptions['runner'], extra: Partial<PassOptions> = {}): PassOptions {
    return {
      pool: db().pool,
      clock,
      loadDefinition: () => Promise.resolve({ definition, text }),
      runner: r,
      parallel: 2,
      maxRunsPerHour: 10,
      driftCheck: false,
      report: (line) => lines.push(line),
      ...extra,
    }
  }

  it('a converged fleet: nothing to do, no run; with the drift check, one drift run of the nodes it may touch', async () => {
    await convergedFleet()
    const r = runner()
    const pass = await reconcilePass(options(r))
    assert.equal(pass.outcome, 'nothing_to_do')
    assert.deepEqual(r.calls, [])
    const checked = await reconcilePass(options(r, { driftCheck: true }))
    assert.equal(checked.outcome, 'nothing_to_do')
    assert.deepEqual(r.drifts, [['app-1', 'app-2', 'build-1', 'db-1']])
    assert.equal(checked.driftCheck?.outcome, 'no_drift')
  })

  it('repairs drifted and behind nodes: the canary alone first, then at most --parallel per run, actor reconcile', async () => {
    await convergedFleet()
    // build-1 and app-2 drifted by hand (a drift run found them), db-1's agent is behind.
    await ledgerRun('drift', 'ops@desk', { 'build-1': 'changed', 'app-2': 'changed', 'app-1': 'converged' })
    await db().pool.query(`UPDATE nodes SET host_agent_version = '0.0.9' WHERE id = 'db-1'`)
    const r = runner()
    const pass = await reconcilePass(options(r))
    assert.equal(pass.outcome, 'repaired')
    assert.deepEqual(
      pass.repair.map((c) => [c.nodeId, c.why]),
      [
        ['app-2', 'drifted'],
        ['build-1', 'drifted'],
        ['db-1', 'behind'],
      ],
    )
    assert.deepEqual(r.calls, [['build-1'], ['app-2', 'db-1']], 'the definition canary build-1 goes alone first')
    assert.deepEqual(
      pass.runs.map((x) => x.outcome),
      ['converged', 'converged'],
    )
    assert.deepEqual([pass.budget.used, pass.budget.left], [2, 8])
    // Repaired: the next pass finds nothing (the sync runs are newer than the drift run).
    await db().pool.query(`UPDATE nodes SET host_agent_version = '0.1.0' WHERE id = 'db-1'`)
    assert.equal((await reconcilePass(options(r))).outcome, 'nothing_to_do')
  })

  it('a node synced with another definition is behind; held, drained and parked ones are left alone', async () => {
    await convergedFleet()
    const newer = `${text}\n# a newer definition\n`
    await holdNode({ pool: db().pool, nodeId: 'app-1', actor: 'ops@desk', reason: 'kernel debugging' })
    await db().pool.query(`UPDATE nodes SET status = 'parked', schedulable = false WHERE id = 'db-1'`)
    await upsertDeclaredNode(db().pool, { id: 'build-2', pool: 'build', status: 'draining' })
    const r = runner()
    const pass = await reconcilePass({
      ...options(r),
      loadDefinition: () => Promise.resolve({ definition, text: newer }),
    })
    assert.deepEqual(r.calls, [['build-1'], ['app-2']])
    assert.deepEqual(
      pass.skipped.map((s) => s.nodeId),
      ['app-1', 'db-1'],
      'the held and the parked node; a declared-drained node is not even judged',
    )
    assert.match(pass.skipped[0]!.reason, /held by ops@desk .*kernel debugging/)
  })

  it('the budget is counted from the ledger: spent, the rest waits; a restart does not reset it; an hour later it goes on', async () => {
    await convergedFleet()
    const newer = `${text}\n# a newer definition\n`
    const r = runner(new Set(), newer)
    const o = {
      ...options(r, { parallel: 1, maxRunsPerHour: 2 }),
      loadDefinition: () => Promise.resolve({ definition, text: newer }),
    }
    const first = await reconcilePass(o)
    assert.equal(first.outcome, 'budget_spent')
    assert.deepEqual(r.calls, [['build-1'], ['app-1']])
    assert.deepEqual(first.deferred, ['app-2', 'db-1'])
    assert.ok(first.budget.nextSlotAt, 'it says when a run may start again')
    // A new process (nothing in memory) reads the same ledger: still spent.
    const again = await reconcilePass(o)
    assert.equal(again.outcome, 'budget_spent')
    assert.equal(r.calls.length, 2)
    // An hour later (the injected clock), the budget is back; the canary goes first again.
    clock.advance(3_600_000 + 1000)
    const later = await reconcilePass(o)
    assert.equal(later.outcome, 'repaired')
    assert.deepEqual(r.calls.slice(2), [['app-2'], ['db-1']])
  })

  it('the first failed run stops it: event, open stop, the rest untouched; later passes refuse until --clear', async () => {
    await convergedFleet()
    const newer = `${text}\n# a newer definition\n`
    const r = runner(new Set(['build-1']))
    const o = { ...options(r), loadDefinition: () => Promise.resolve({ definition, text: newer }) }
    const failed = await reconcilePass(o)
    assert.equal(failed.outcome, 'failed')
    assert.deepEqual(r.calls, [['build-1']], 'the canary failed: no other node was touched')
    assert.deepEqual(failed.deferred, ['app-1', 'app-2', 'db-1'])
    assert.equal(failed.stop?.code, 'SYNC_PARTIAL_FAILURE')
    assert.deepEqual(failed.stop?.nodes, ['build-1'])
    assert.match(failed.stop!.message, /build-1 failed/)
    const stopped = await listEvents(db().pool, { kind: 'reconcile_stopped' })
    assert.equal(stopped.length, 1)
    assert.equal(stopped[0]?.data.run_id, failed.runs[0]?.runId)

    const refused = await reconcilePass(o)
    assert.equal(refused.outcome, 'stopped')
    assert.equal(r.calls.length, 1, 'a stopped reconcile does nothing')

    const cleared = await clearReconcile({ pool: db().pool, actor: 'lead@desk' })
    assert.equal(cleared.cleared?.code, 'SYNC_PARTIAL_FAILURE')
    assert.equal(
      (await clearReconcile({ pool: db().pool, actor: 'lead@desk' })).cleared,
      null,
      'a second clear changes nothing',
    )
    assert.equal(await openReconcileStop(db().pool), undefined)
    const fixed = runner(new Set(), newer)
    assert.equal((await reconcilePass({ ...o, runner: fixed })).outcome, 'repaired')
    assert.equal((await listEvents(db().pool, { kind: 'reconcile_cleared' }))[0]?.data.actor, 'lead@desk')
  })

  it("a person's sync holding the sync lock defers the pass without a stop", async () => {
    await convergedFleet()
    const newer = `${text}\n# a newer definition\n`
    const busy = {
      checkDrift: () => Promise.reject(new Error('not called')),
      sync: () => Promise.reject(new FleetkitError('SYNC_IN_PROGRESS', 'run 7 holds the lock')),
    }
    const pass = await reconcilePass({
      ...options(busy),
      loadDefinition: () => Promise.resolve({ definition, text: newer }),
    })
    assert.equal(pass.outcome, 'sync_busy')
    assert.equal(await openReconcileStop(db().pool), undefined)
  })

  it('one reconcile at a time: a second gets RECONCILE_IN_PROGRESS; the loop runs passes until its signal ends it', async () => {
    await convergedFleet()
    const held = await withSessionLock(db().pool, RECONCILE_LOCK_KEY, async () => {
      const error = await runReconcile({
        ...options(runner()),
        once: true,
        intervalMs: 1000,
        signal: new AbortController().signal,
        sleep: () => Promise.resolve(),
      }).then(
        () => assert.fail('expected a refusal'),
        (e: unknown) => e,
      )
      assert.ok(error instanceof FleetkitError && error.code === 'RECONCILE_IN_PROGRESS', String(error))
    })
    assert.equal(held.locked, true)

    const stop = new AbortController()
    const sleeps: number[] = []
    const result = await runReconcile({
      ...options(runner()),
      once: false,
      intervalMs: 600_000,
      signal: stop.signal,
      // The injected sleep returns at once; the third one is where systemd's SIGTERM lands.
      sleep: (ms) => {
        sleeps.push(ms)
        if (sleeps.length === 3) stop.abort()
        return Promise.resolve()
      },
    })
    assert.equal(result.passes, 3)
    assert.deepEqual(sleeps, [600_000, 600_000, 600_000])
    assert.equal(result.last.outcome, 'nothing_to_do')
  })

  it('the CLI: --once exits RECONCILE_STOPPED (26) while stopped, the pass in data; --clear clears it, by schema', async () => {
    const env = { DATABASE_URL: db().url, FLEETKIT_ACTOR: 'lead@desk' }
    await recordReconcileStop(db().pool, {
      runId: null,
      code: 'SYNC_CANARY_FAILED',
      message: 'run 9 ended canary_failed',
      nodes: ['build-1'],
    })
    const stopped = await runFleetkit(['reconcile', '--once', '--definition', FLEET, '--json'], { env })
    assert.equal(stopped.code, 26, stopped.stdout + stopped.stderr)
    assertMatchesOutputSchema('reconcile', stopped.json)
    assert.equal(stopped.json.code, 'RECONCILE_STOPPED')
    assert.equal(stopped.json.data.pass.outcome, 'stopped')
    assert.ok(stopped.json.actions.includes(`fleetkit reconcile --definition ${FLEET} --clear`), stopped.json.actions)
    const cleared = await runFleetkit(['reconcile', '--clear', '--json'], { env })
    assert.equal(cleared.code, 0, cleared.stdout + cleared.stderr)
    assertMatchesOutputSchema('reconcile', cleared.json)
    assert.equal(cleared.json.result.cleared.code, 'SYNC_CANARY_FAILED')
    assert.equal((await listEvents(db().pool, { kind: 'reconcile_cleared' }))[0]?.data.actor, 'lead@desk')
    const human = await runFleetkit(['reconcile', '--clear'], { env })
    assert.match(human.stdout, /not stopped; nothing changed/)
  })
})
