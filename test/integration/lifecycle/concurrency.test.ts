// Two operators at once (issue 20, item 1; issue 36, item 6; issue 37, item 3): 20 real CLI processes of
// seed, node token and node token --reissue for one node (20 concurrent calls of admit, drain and
// decommission; 19 decommissions are NODE_BUSY, provision-one-winner.test.ts has provisioning), released
// together, so each has read the node before any of them writes; and 20 reissues not held, which read
// it unevenly, some after the winner committed. Of the 20 exactly one
// changes the state; each other exits with a stated outcome; every stdout is exactly one --json
// document; and the one secret printed (or written into the seed) is the one whose hash is stored.
// The race is forced, not hoped for: the test holds the node's lock (the product's own
// lockNodeSecretState / lockNode) while the processes start, and lets go only once all 20 wait on it.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'

import pgModule from 'pg'
import type pg from 'pg'

import { systemClock } from '../../../src/config/clock.js'
import { admitNode } from '../../../src/lifecycle/node/node-admit.js'
import { decommissionNode } from '../../../src/lifecycle/node/node-decommission.js'
import { drainNode } from '../../../src/lifecycle/node/node-drain.js'
import type { TransitionResult } from '../../../src/lifecycle/node/node-transition.js'
import { packagePath } from '../../../src/package-root.js'
import { lockNodeSecretState } from '../../../src/store/nodes/enrollment-secrets.js'
import { lockNode, recordNodeCapacity } from '../../../src/store/nodes/node-lifecycle.js'
import { withNodeSeedLock } from '../../../src/store/nodes/node-run-lock.js'
import { setNodeStatus, upsertDeclaredNode } from '../../../src/store/nodes/nodes.js'
import { agentSeedScriptOf } from '../../support/agent-seed-script.js'
import { type CliRun, runFleetkit } from '../../support/cli.js'
import { eventually } from '../../support/eventually.js'
import {
  type DisposablePostgres,
  type FreshDatabase,
  freshDatabase,
  startDisposablePostgres,
} from '../../support/postgres.js'

const RUNS = 20
const EXAMPLE = ['--definition', 'examples/fleet.yaml']

describe('two operators at once: 20 concurrent runs of each lifecycle command (real CLI, real PostgreSQL)', function () {
  // 20 CLI processes per race on a shared 2-core machine: tens of seconds each.
  this.timeout(600_000)
  let server: DisposablePostgres
  let db: FreshDatabase
  let dir: string
  let env: Record<string, string>

  before(async () => {
    server = await startDisposablePostgres()
    db = await freshDatabase(server.url)
    dir = mkdtempSync(join(tmpdir(), 'fleetkit-races-'))
    mkdirSync(join(dir, 'pki'), { mode: 0o700 })
    copyFileSync(
      packagePath('test', 'fixtures', 'cloud-init', 'gateway-ca-bundle.pem'),
      join(dir, 'pki', 'ca-bundle.pem'),
    )
    env = {
      DATABASE_URL: db.url,
      FLEETKIT_PKI_DIR: join(dir, 'pki'),
      FLEETKIT_STATE_DIR: join(dir, 'state'),
      FLEETKIT_ACTOR: 'race',
    }
  })

  after(async () => {
    await db?.drop()
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  /** Backends of this database waiting on a lock (a row, or the advisory lock of a node's secret). */
  async function waitingOnLocks(): Promise<number> {
    const { rows } = await db.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
    )
    return Number(rows[0]!.n)
  }

  /**
   * Starts RUNS processes of `fleetkit ARGS --json` while this test holds the node's lock
   * (`hold`, in an open transaction), waits until every one of them waits on it, then commits
   * and lets them race. Returns every run, in no particular order.
   */
  async function race(args: string[], hold: (client: pg.PoolClient) => Promise<unknown>): Promise<CliRun[]> {
    const client = await db.pool.connect()
    let runs: Promise<CliRun>[]
    let ended = 0
    try {
      await client.query('BEGIN')
      await hold(client)
      runs = Array.from({ length: RUNS }, () =>
        runFleetkit([...args, '--json'], { env, timeout: 500_000 }).finally(() => {
          ended += 1
        }),
      )
      await eventually(
        `all ${RUNS} runs of fleetkit ${args.join(' ')} waiting on the node's lock`,
        async () => ((await waitingOnLocks()) >= RUNS ? true : undefined),
        {
          timeoutMs: 400_000,
          intervalMs: 100,
          stop: () => (ended > 0 ? `${ended} run(s) ended before the race began` : undefined),
        },
      )
    } finally {
      await client.query('COMMIT')
      client.release()
    }
    const settled = await Promise.allSettled(runs)
    return settled.map((s) => {
      if (s.status === 'rejected') throw s.reason
      return s.value
    })
  }

  /** Every stdout is exactly one JSON document; returns the winners (status 0) and the refusals by code. */
  function outcomes(runs: CliRun[]): { winners: CliRun[]; refused: Map<string, number> } {
    const refused = new Map<string, number>()
    const winners: CliRun[] = []
    for (const run of runs) {
      assert.doesNotThrow(() => JSON.parse(run.stdout), `stdout is one JSON document:\n${run.stdout}\n${run.stderr}`)
      const json = JSON.parse(run.stdout) as { status: number; code?: string; exitCode?: number }
      if (json.status === 0) {
        assert.equal(run.code, 0, run.stderr)
        winners.push(run)
      } else {
        assert.equal(run.code, json.exitCode, run.stdout)
        assert.ok(json.code, run.stdout)
        refused.set(json.code!, (refused.get(json.code!) ?? 0) + 1)
      }
    }
    return { winners, refused }
  }

  async function events(nodeId: string, kind: string): Promise<number> {
    const { rows } = await db.pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM events WHERE node_id = $1 AND kind = $2',
      [nodeId, kind],
    )
    return Number(rows[0]!.n)
  }

  async function storedHash(nodeId: string): Promise<string | null> {
    const { rows } = await db.pool.query<{ hash: string | null }>(
      `SELECT encode(enrollment_secret_sha256, 'hex') AS hash FROM nodes WHERE id = $1`,
      [nodeId],
    )
    return rows[0]?.hash ?? null
  }

  const sha256 = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex')

  it('node token for a node not in the state: one registers it and prints the stored secret; 19 print only NODE_SECRET_PENDING', async () => {
    const runs = await race(['node', 'token', 'app-1', ...EXAMPLE], (client) => lockNodeSecretState(client, 'app-1'))
    const { winners, refused } = outcomes(runs)
    assert.equal(winners.length, 1, JSON.stringify([...refused]))
    assert.deepEqual([...refused], [['NODE_SECRET_PENDING', RUNS - 1]])
    const result = JSON.parse(winners[0]!.stdout).result as { secret: string; registered: boolean }
    assert.equal(result.registered, true)
    assert.equal(await storedHash('app-1'), sha256(result.secret), 'the secret printed is the one stored')
    assert.equal(await events('app-1', 'secret_issued'), 1)
  })

  it('node token --reissue: one replaces the secret and prints it; 19 are refused (NODE_CHANGED_CONCURRENTLY) and print no secret', async () => {
    const before = await storedHash('app-1')
    const runs = await race(['node', 'token', 'app-1', '--reissue', '--yes', ...EXAMPLE], (client) =>
      lockNodeSecretState(client, 'app-1'),
    )
    const { winners, refused } = outcomes(runs)
    assert.equal(winners.length, 1, JSON.stringify([...refused]))
    assert.deepEqual([...refused], [['NODE_CHANGED_CONCURRENTLY', RUNS - 1]])
    for (const run of runs) if (run !== winners[0]) assert.doesNotMatch(run.stdout, /[0-9a-f]{64}/)
    const result = JSON.parse(winners[0]!.stdout).result as { secret: string; reissued: boolean }
    assert.equal(result.reissued, true)
    const after = await storedHash('app-1')
    assert.notEqual(after, before)
    assert.equal(after, sha256(result.secret), 'the secret printed is the one stored')
    assert.equal(await events('app-1', 'secret_reissued'), 1)
  })

  it('node token --reissue, 20 processes started together but not held: they read the node unevenly, still one wins', async () => {
    // No lock held: processes start unevenly on a loaded machine, so most read the node after the
    // first committed (the fault-injection run: 4 or 5 of 8 printed a secret, only the last worked).
    // Each started before the winner stored its secret, so each is refused all the same.
    await upsertDeclaredNode(db.pool, { id: 'app-3', pool: 'build', status: 'active' })
    await setNodeStatus(db.pool, 'app-3', 'active')
    const args = ['node', 'token', 'app-3', '--reissue', '--yes', ...EXAMPLE, '--json']
    const runs = await Promise.all(Array.from({ length: RUNS }, () => runFleetkit(args, { env, timeout: 500_000 })))
    const { winners, refused } = outcomes(runs)
    assert.equal(winners.length, 1, JSON.stringify([...refused]))
    assert.deepEqual([...refused], [['NODE_CHANGED_CONCURRENTLY', RUNS - 1]])
    for (const run of runs) if (run !== winners[0]) assert.doesNotMatch(run.stdout + run.stderr, /[0-9a-f]{64}/)
    const first = (JSON.parse(winners[0]!.stdout).result as { secret: string }).secret
    assert.equal(await storedHash('app-3'), sha256(first), 'the secret printed is the one stored')
    assert.equal(await events('app-3', 'secret_reissued'), 1)
    // Run again once that one finished (its secret lost): it replaces it.
    const again = await runFleetkit(args, { env })
    assert.equal(again.code, 0, again.stdout + again.stderr)
    const second = (again.json.result as { secret: string }).secret
    assert.notEqual(second, first)
    assert.equal(await storedHash('app-3'), sha256(second))
    assert.equal(await events('app-3', 'secret_reissued'), 2)
  })

  it('seed --kind agent: one registers the node and writes the seed holding the stored secret; 19 are refused and leave no file', async () => {
    const runs = await race(['seed', 'app-2', '--kind', 'agent', '--rekey', ...EXAMPLE], (client) =>
      lockNodeSecretState(client, 'app-2'),
    )
    const { winners, refused } = outcomes(runs)
    assert.equal(winners.length, 1, JSON.stringify([...refused]))
    assert.deepEqual([...refused], [['NODE_SECRET_PENDING', RUNS - 1]])
    const result = JSON.parse(winners[0]!.stdout).result as { path: string }
    const seedsDir = join(dir, 'state', 'seeds')
    assert.equal(result.path, join(seedsDir, 'app-2.user-data'))
    assert.deepEqual(readdirSync(seedsDir), ['app-2.user-data'], 'no staged file of a refused run is left')
    const raw = readFileSync(result.path)
    const text = (raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw) : raw).toString('utf8')
    const secret = /<<'FLEETKIT_ENROLLMENT_SECRET'\n([0-9a-f]{64})\n/.exec(agentSeedScriptOf(text))?.[1]
    assert.ok(secret, 'the seed holds an enrollment secret')
    assert.equal(await storedHash('app-2'), sha256(secret), 'the seed holds the secret whose hash is stored')
    assert.equal(await events('app-2', 'secret_issued'), 1)
  })

  it('seed --reissue waits for a seed of the node in progress: it commits and writes only after it, so the seed on disk holds the stored secret', async () => {
    // Two reissues that both win (the second read the node after the first committed) used to race between
    // each one's commit and its file's rename: the file left could hold the secret the state had replaced.
    const before = await storedHash('app-2')
    const seedPath = join(dir, 'state', 'seeds', 'app-2.user-data')
    const fileBefore = readFileSync(seedPath)
    let run: Promise<CliRun> | undefined
    let ended = false
    await withNodeSeedLock(db.pool, 'app-2', async () => {
      run = runFleetkit(['seed', 'app-2', '--kind', 'agent', '--reissue', '--rekey', ...EXAMPLE, '--json'], {
        env,
        timeout: 500_000,
      }).finally(() => {
        ended = true
      })
      await eventually(
        'the seed to wait on the node seed lock',
        async () => ((await waitingOnLocks()) >= 1 ? true : undefined),
        {
          timeoutMs: 400_000,
          intervalMs: 100,
          stop: () => (ended ? 'the seed ended while another held the lock' : undefined),
        },
      )
      assert.equal(await storedHash('app-2'), before, 'nothing committed while the lock is held')
      assert.deepEqual(readFileSync(seedPath), fileBefore, 'nothing written while the lock is held')
    })
    const done = await run!
    assert.equal(done.code, 0, done.stdout + done.stderr)
    const raw = readFileSync(seedPath)
    const text = (raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw) : raw).toString('utf8')
    const secret = /<<'FLEETKIT_ENROLLMENT_SECRET'\n([0-9a-f]{64})\n/.exec(agentSeedScriptOf(text))?.[1]
    assert.ok(secret, 'the seed holds an enrollment secret')
    assert.notEqual(await storedHash('app-2'), before, 'the reissue replaced the secret')
    assert.equal(await storedHash('app-2'), sha256(secret), 'the seed on disk holds the secret whose hash is stored')
  })

  it('seed --reissue started before another run stored its secret is refused, however late it reads the node', async () => {
    // The probe's race: of 3 `seed --reissue --output -` at once, two printed a seed, one of them dead. A
    // run that reads the node only after the other committed sees nothing changed since its read: only
    // its start time, before the other's secret was issued, tells the two ran at once.
    const args = ['seed', 'app-1', '--kind', 'agent', '--reissue', '--rekey', '--yes', ...EXAMPLE, '--json']
    const setup = await runFleetkit(args, { env })
    assert.equal(setup.code, 0, setup.stdout + setup.stderr)
    const other = createHash('sha256').update(`other run ${Date.now()}`).digest()
    const client = await db.pool.connect()
    let run: Promise<CliRun> | undefined
    let ended = false
    try {
      // The run starts first, then is kept from reading the node until the other run's secret is stored.
      run = runFleetkit(args, { env, timeout: 500_000 }).finally(() => {
        ended = true
      })
      await client.query('BEGIN')
      await client.query('LOCK TABLE nodes IN ACCESS EXCLUSIVE MODE')
      await eventually(
        'the seed to wait to read the node',
        async () => ((await waitingOnLocks()) >= 1 ? true : undefined),
        {
          timeoutMs: 400_000,
          intervalMs: 100,
          stop: () => (ended ? 'the seed ended before it read the node' : undefined),
        },
      )
      // The other run's reissue, as applySecretPlan stores one.
      await client.query(
        `UPDATE nodes SET enrollment_secret_sha256 = $2, enrollment_secret_issued_at = clock_timestamp(),
                enrollment_secret_expires_at = clock_timestamp() + interval '1 day' WHERE id = $1`,
        ['app-1', other],
      )
    } finally {
      await client.query('COMMIT')
      client.release()
    }
    const done = await run!
    assert.equal(done.json.code, 'NODE_CHANGED_CONCURRENTLY', done.stdout + done.stderr)
    assert.doesNotMatch(done.stdout, /[0-9a-f]{64}/, 'no secret printed')
    assert.equal(await storedHash('app-1'), other.toString('hex'), "the other run's secret is the one stored")
  })

  describe('admit, drain, decommission of one node: of 20 calls at once one changes it, 19 find it done or are refused', () => {
    // These print nothing secret and their output is oclif's, printed after the commit: the race is
    // in the database, so 20 concurrent calls of the lifecycle functions, each on its own connection,
    // show it at a fraction of the cost of 20 CLI processes (the processes above show the output side).
    const node = 'race-1'
    let calls: pg.Pool

    before(async () => {
      calls = new pgModule.Pool({ connectionString: db.url, max: RUNS })
      // As freshDatabase's pool: an idle connection ended by the server (DROP DATABASE ... WITH (FORCE), a
      // shutdown) is an 'error' on the pool, which without a listener ends the worker process.
      calls.on('error', () => undefined)
      await upsertDeclaredNode(db.pool, { id: node, pool: 'build', status: 'active' })
      await setNodeStatus(db.pool, node, 'active')
      await recordNodeCapacity(db.pool, node, { cpu: 4, memoryMib: 8192, diskGib: 80 })
    })
    after(async () => {
      await calls?.end()
    })

    /** RUNS calls of `call` while this test holds the node's row lock, released once all wait on it. */
    async function raceCalls(call: () => Promise<TransitionResult>, id = node): Promise<TransitionResult[]> {
      const client = await db.pool.connect()
      let results: Promise<TransitionResult>[]
      try {
        await client.query('BEGIN')
        await lockNode(client, id)
        // Heard from just now (admit wants a heartbeat within 60 s on the database's clock).
        await client.query('UPDATE nodes SET last_seen_at = clock_timestamp() WHERE id = $1', [id])
        results = Array.from({ length: RUNS }, call)
        await eventually(`all ${RUNS} calls waiting on the node's lock`, async () =>
          (await waitingOnLocks()) >= RUNS ? true : undefined,
        )
      } finally {
        await client.query('COMMIT')
        client.release()
      }
      return Promise.all(results)
    }

    it('node admit --definition (a capacity to record): one admits and records it, 19 find it done and write nothing', async () => {
      const id = 'race-2'
      const capacity = { cpu: 8, memoryMib: 16384, diskGib: 160 }
      await upsertDeclaredNode(db.pool, { id, pool: 'build', status: 'active' })
      await setNodeStatus(db.pool, id, 'active')
      const results = await raceCalls(() => admitNode({ pool: calls, nodeId: id, actor: 'race', capacity }), id)
      assert.equal(results.filter((r) => r.changed).length, 1, 'exactly one changed it')
      for (const r of results.filter((r) => !r.changed)) assert.match(r.message, /already admitted .*nothing changed/)
      assert.ok(results.every((r) => r.to === 'active' && r.schedulable))
      assert.equal(await events(id, 'node_admitted'), 1)
      // Admitted again from a definition whose capacity changed: recorded, and that is one more admission.
      const bigger = await admitNode({ pool: calls, nodeId: id, actor: 'race', capacity: { ...capacity, cpu: 16 } })
      assert.equal(bigger.changed, true)
      assert.match(bigger.message, /capacity is now cpu 16/)
      assert.equal(await events(id, 'node_admitted'), 2)
    })

    const clock = systemClock
    for (const [action, event, to, call] of [
      ['admit', 'node_admitted', 'active', () => admitNode({ pool: calls, nodeId: node, actor: 'race' })],
      ['drain', 'node_draining', 'draining', () => drainNode({ pool: calls, nodeId: node, actor: 'race', clock })],
    ] as const) {
      it(`node ${action}`, async () => {
        const results = await raceCalls(call)
        assert.equal(results.filter((r) => r.changed).length, 1, 'exactly one changed it')
        assert.ok(results.every((r) => r.to === to))
        assert.equal(await events(node, event), 1)
      })
    }

    // Decommission holds the node's run lock for its whole run (taken without waiting, like provision
    // and replace): the one holding it waits on the row lock, the 19 others are NODE_BUSY at once.
    it('node decommission: one retires it; 19 are refused at once with NODE_BUSY; one after it finds it done', async () => {
      const client = await db.pool.connect()
      let results: Promise<TransitionResult | Error>[]
      let refused = 0
      try {
        await client.query('BEGIN')
        await lockNode(client, node)
        results = Array.from({ length: RUNS }, () =>
          decommissionNode({ pool: calls, nodeId: node, actor: 'race', clock }).catch((error: Error) => {
            refused += 1
            return error
          }),
        )
        await eventually(`${RUNS - 1} calls refused and one waiting on the node's row lock`, async () =>
          refused >= RUNS - 1 && (await waitingOnLocks()) >= 1 ? true : undefined,
        )
      } finally {
        await client.query('COMMIT')
        client.release()
      }
      const settled = await Promise.all(results)
      const winners = settled.filter((r): r is TransitionResult => !(r instanceof Error))
      assert.equal(winners.length, 1)
      assert.equal(winners[0]!.changed, true)
      assert.equal(winners[0]!.to, 'retired')
      assert.deepEqual(
        settled.filter((r) => r instanceof Error).map((e) => (e as { code?: string }).code),
        Array(RUNS - 1).fill('NODE_BUSY'),
      )
      assert.equal(await events(node, 'node_retired'), 1)
      const later = await decommissionNode({ pool: calls, nodeId: node, actor: 'race', clock })
      assert.equal(later.changed, false)
    })
  })
})
