// `fleetkit sweep` by hand judges with the thresholds the gateways recorded with the sweep lease, not its own
// environment's (the probe's finding: a manual sweep at the defaults, 300 s, made nodes lost that a gateway
// set to 3600 s leaves alone). Other values set here are refused, naming both, unless --thresholds-from-env;
// with nothing recorded it uses its environment or the defaults and says so. The real CLI, real PostgreSQL;
// the gateway is its Sweeper, which records its thresholds with the lease at each claim.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { LifecycleMetrics } from '../../../src/gateway/metrics/lifecycle-metrics.js'
import { Sweeper } from '../../../src/gateway/sweeper.js'
import { runSweep } from '../../../src/lifecycle/node/sweep.js'
import { memoryLogger } from '../../../src/log/logger.js'
import { listEvents } from '../../../src/store/events.js'
import { getNode, upsertDeclaredNode } from '../../../src/store/nodes/nodes.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { freshDatabasePerTest } from '../../support/postgres.js'

/** The demo's repro: a gateway that waits an hour before it calls a node lost. */
const LENIENT = { unhealthyAfterSeconds: 1800, lostAfterSeconds: 3600 }

describe('fleetkit sweep judges with the thresholds the gateways recorded (real PostgreSQL, the CLI)', function () {
  // Each test runs the real CLI a few times (a second or two each, more on a loaded machine).
  this.timeout(180_000)
  const db = freshDatabasePerTest()
  let stateDir: string
  before(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'fleetkit-manual-sweep-'))
  })
  after(async () => {
    await rm(stateDir, { recursive: true, force: true })
  })

  /** The CLI with only the thresholds given here: none leak in from the environment of the test run. */
  const sweep = (args: string[], env: Record<string, string> = {}) =>
    runFleetkit(['sweep', ...args], {
      env: {
        DATABASE_URL: db().url,
        FLEETKIT_STATE_DIR: stateDir,
        FLEETKIT_NODE_UNHEALTHY_AFTER: undefined,
        FLEETKIT_NODE_LOST_AFTER: undefined,
        ...env,
      },
    })
  /** A node last heard from `silentSeconds` ago on the database's clock. */
  async function silentNode(id: string, silentSeconds: number) {
    await upsertDeclaredNode(db().pool, { id, pool: 'workers', status: 'active' })
    await db().pool.query('UPDATE nodes SET last_seen_at = now() - make_interval(secs => $2) WHERE id = $1', [
      id,
      silentSeconds,
    ])
  }
  /** A gateway at LENIENT that has swept once: it holds the lease. */
  async function lenientGateway() {
    const gateway = new Sweeper({
      pool: db().pool,
      sweep: (pool) => runSweep(pool, LENIENT),
      thresholds: LENIENT,
      intervalMs: 60_000,
      leaseMs: 60_000,
      holder: 'gw-lenient',
      logger: memoryLogger('gateway', 'debug'),
      metrics: new LifecycleMetrics(db().pool, () => undefined),
    })
    assert.equal(await gateway.tick(), 'swept')
    return gateway
  }
  const statusOf = async (id: string) => (await getNode(db().pool, id))!.status

  it('a node silent 400 s, which the gateway at 1800 s / 3600 s leaves alone, is left alone by hand too', async () => {
    await silentNode('n-1', 400)
    const gateway = await lenientGateway()
    try {
      const run = await sweep(['--json'])
      assert.equal(run.code, 0, run.stdout + run.stderr)
      assertMatchesOutputSchema('sweep', run.json)
      const result = run.json.result
      assert.deepEqual([result.lost, result.unhealthy], [[], []])
      assert.deepEqual(result.thresholds, LENIENT)
      assert.equal(result.thresholdsFrom.source, 'gateway')
      assert.deepEqual(
        [result.thresholdsFrom.recorded.holder, result.thresholdsFrom.recorded.holdsLease],
        ['gw-lenient', true],
      )
      assert.equal(await statusOf('n-1'), 'active')
      // A variable set here to the gateway's own value agrees; the one left unset takes the gateway's.
      const agreeing = await sweep(['--json'], { FLEETKIT_NODE_LOST_AFTER: '3600' })
      assert.equal(agreeing.code, 0, agreeing.stdout + agreeing.stderr)
      assert.deepEqual(agreeing.json.result.thresholds, LENIENT)
      // Human mode says whose thresholds it judged with.
      const human = await sweep([])
      assert.equal(human.code, 0, human.stderr)
      assert.match(human.stdout, /thresholds 1800 s \/ 3600 s, recorded by the sweeping gateway, gw-lenient/)
    } finally {
      await gateway.stop()
    }
  })

  it('other thresholds set here are refused, naming both, nothing swept; --thresholds-from-env judges with them', async () => {
    await silentNode('n-2', 400)
    // The gateway stopped (the lease released): what it recorded is still the last word on the fleet.
    await (await lenientGateway()).stop()
    const refused = await sweep(['--json'], { FLEETKIT_NODE_LOST_AFTER: '300' })
    assert.equal(refused.code, 2, refused.stdout + refused.stderr)
    assertMatchesOutputSchema('sweep', refused.json)
    assert.equal(refused.json.code, 'SWEEP_THRESHOLDS_DISAGREE')
    assert.match(refused.json.message, /FLEETKIT_NODE_LOST_AFTER=300/)
    assert.match(refused.json.message, /the gateway that swept last \(gw-lenient, .*\) judges with 1800 s \/ 3600 s/)
    assert.deepEqual(refused.json.data, {
      environment: { FLEETKIT_NODE_LOST_AFTER: 300 },
      recorded: LENIENT,
      holder: 'gw-lenient',
    })
    assert.ok(refused.json.actions.some((a: string) => a.startsWith('fleetkit sweep --thresholds-from-env')))
    assert.equal(await statusOf('n-2'), 'active', 'a refused sweep changed nothing')
    assert.deepEqual(await listEvents(db().pool, { nodeId: 'n-2' }), [])

    const chosen = await sweep(['--json', '--thresholds-from-env'], { FLEETKIT_NODE_LOST_AFTER: '300' })
    assert.equal(chosen.code, 0, chosen.stdout + chosen.stderr)
    assertMatchesOutputSchema('sweep', chosen.json)
    assert.deepEqual(
      chosen.json.result.lost.map((l: { nodeId: string }) => l.nodeId),
      ['n-2'],
    )
    assert.deepEqual(chosen.json.result.thresholds, { unhealthyAfterSeconds: 90, lostAfterSeconds: 300 })
    assert.equal(chosen.json.result.thresholdsFrom.source, 'environment')
    assert.deepEqual(
      [chosen.json.result.thresholdsFrom.recorded.thresholds, chosen.json.result.thresholdsFrom.recorded.holdsLease],
      [LENIENT, false],
    )
    assert.equal(await statusOf('n-2'), 'lost')
  })

  it('with no gateway ever recorded it judges with its environment, else the defaults, and says which', async () => {
    await silentNode('n-3', 100)
    const defaults = await sweep(['--json'])
    assert.equal(defaults.code, 0, defaults.stdout + defaults.stderr)
    assertMatchesOutputSchema('sweep', defaults.json)
    assert.deepEqual(defaults.json.result.thresholds, { unhealthyAfterSeconds: 90, lostAfterSeconds: 300 })
    assert.deepEqual(defaults.json.result.thresholdsFrom, { source: 'defaults' })
    assert.deepEqual(
      defaults.json.result.unhealthy.map((u: { nodeId: string }) => u.nodeId),
      ['n-3'],
    )
    await silentNode('n-4', 100)
    const human = await sweep([], { FLEETKIT_NODE_UNHEALTHY_AFTER: '200', FLEETKIT_NODE_LOST_AFTER: '400' })
    assert.equal(human.code, 0, human.stderr)
    assert.match(human.stdout, /thresholds 200 s \/ 400 s, from this environment: no gateway recorded any/)
    assert.doesNotMatch(human.stdout, /n-4/, 'judged at 200 s, a node silent 100 s is left alone')
    assert.equal(await statusOf('n-4'), 'active')
  })
})
