// fleetkit seed and node token never strand a node: a node past provisioning gets a new secret
// only with --reissue, a seed file that cannot be written in full (a missing directory, a full
// disk) leaves the state exactly as it was, and a secret is printed only after it is stored, so a
// stdout that fails then (/dev/full, a reader that went away) is reported on stderr. Real PostgreSQL, real CLI.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { closeSync, openSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import type { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { systemClock } from '../../../src/config/clock.js'
import { systemRng } from '../../../src/config/rng.js'
import { syncRuntime } from '../../../src/commands/sync.js'
import { issueNodeToken } from '../../../src/lifecycle/node/node-token.js'
import { packagePath } from '../../../src/package-root.js'
import { assertMatchesOutputSchema, fleetkitEntry, runFleetkit } from '../../support/cli.js'
import {
  type DisposablePostgres,
  type FreshDatabase,
  freshDatabase,
  startDisposablePostgres,
} from '../../support/postgres.js'
import { validDefinition } from '../../support/definition-fixture.js'
import { runProcess } from '../../support/process.js'

const EXAMPLE = ['--definition', 'examples/fleet.yaml']
/** What an error's next command repeats of the command line (src/cli/context-flags.ts). */
const AS_GIVEN = '--definition examples/fleet.yaml'

interface Snapshot {
  status: string
  hash: string | null
  expiresAt: string | null
  reissued: boolean
  events: number
}

describe('fleetkit seed | node token: secrets past provisioning and failed writes (real PostgreSQL)', function () {
  this.timeout(180_000)
  let server: DisposablePostgres
  let db: FreshDatabase
  let dir: string
  let env: Record<string, string>
  let tiny: string | undefined

  async function snapshot(id: string): Promise<Snapshot> {
    const { rows } = await db.pool.query(
      `SELECT status, encode(enrollment_secret_sha256, 'hex') AS hash, enrollment_secret_expires_at AS expires, enrollment_secret_reissued AS reissued,
              (SELECT count(*) FROM events WHERE node_id = $1) AS events
         FROM nodes WHERE id = $1`,
      [id],
    )
    const r = rows[0] as {
      status: string
      hash: string | null
      expires: Date | null
      reissued: boolean
      events: string
    }
    return {
      status: r.status,
      hash: r.hash,
      expiresAt: r.expires?.toISOString() ?? null,
      reissued: r.reissued,
      events: Number(r.events),
    }
  }

  /**
   * Runs `fleetkit ARGS` with its stdout on `stdout` ('closed': a pipe whose reader is already gone).
   * Its own spawn: test/support/process.ts always gives the child a stdout pipe, and this needs a file descriptor.
   */
  function runWithStdout(args: string[], stdout: number | 'closed'): Promise<{ code: number | null; stderr: string }> {
    const child = spawn(process.execPath, [fleetkitEntry(), ...args], {
      cwd: packagePath(),
      env: { ...process.env, ...env },
      stdio: ['ignore', stdout === 'closed' ? 'pipe' : stdout, 'pipe'],
    })
    // The reader goes away before the seed is written: what `| head -c 100` does to a long seed.
    if (stdout === 'closed') child.stdout!.destroy()
    let stderr = ''
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })))
  }

  before(async () => {
    server = await startDisposablePostgres()
    db = await freshDatabase(server.url)
    dir = mkdtempSync(join(tmpdir(), 'fleetkit-seed-state-'))
    mkdirSync(join(dir, 'pki'), { mode: 0o700 })
    copyFileSync(
      packagePath('test', 'fixtures', 'cloud-init', 'gateway-ca-bundle.pem'),
      join(dir, 'pki', 'ca-bundle.pem'),
    )
    env = {
      DATABASE_URL: db.url,
      FLEETKIT_PKI_DIR: join(dir, 'pki'),
      FLEETKIT_STATE_DIR: join(dir, 'state'),
      FLEETKIT_ACTOR: 'alice@ops',
    }
  })

  after(async () => {
    if (tiny) {
      await runProcess('umount', [tiny])
    }
    await db?.drop()
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('without --output the seed goes to <state dir>/seeds/NODE.user-data (0600, directory 0700), never the current directory', async () => {
    // The CLI runs in the package root (the tests' current directory): the old default wrote ./NODE.user-data there.
    const stray = packagePath('build-1.user-data')
    assert.ok(!existsSync(stray))
    try {
      const ran = await runFleetkit(['seed', 'build-1', '--kind', 'agent', '--rekey', ...EXAMPLE, '--json'], { env })
      assert.equal(ran.code, 0, ran.stderr)
      assertMatchesOutputSchema('seed', ran.json)
      const expected = join(dir, 'state', 'seeds', 'build-1.user-data')
      assert.equal(ran.json.result.path, expected)
      assert.equal(statSync(expected).mode & 0o777, 0o600)
      assert.equal(statSync(join(dir, 'state', 'seeds')).mode & 0o777, 0o700)
      assert.ok(!existsSync(stray), 'nothing written into the current directory')
    } finally {
      rmSync(stray, { force: true })
    }
    assert.equal((await snapshot('build-1')).status, 'provisioning')
    // With the node, every pool's stateful flag, for the sweep (examples/fleet.yaml: database is stateful).
    const pools = await db.pool.query<{ pool: string; stateful: boolean }>(
      'SELECT pool, stateful FROM pool_policies ORDER BY pool',
    )
    assert.deepEqual(
      pools.rows.map((r) => [r.pool, r.stateful]),
      [
        ['application', false],
        ['build', false],
        ['database', true],
      ],
    )
  })

  it('an enrolled node is refused a new secret (NODE_NOT_PROVISIONING naming its status); nothing changes', async () => {
    await db.pool.query("UPDATE nodes SET status = 'active', enrollment_secret_used_at = now() WHERE id = 'build-1'")
    const before = await snapshot('build-1')
    const seed = await runFleetkit(
      [
        'seed',
        'build-1',
        '--kind',
        'agent',
        '--rekey',
        ...EXAMPLE,
        '--output',
        join(dir, 'refused.user-data'),
        '--json',
      ],
      { env },
    )
    assertMatchesOutputSchema('seed', seed.json)
    assert.equal(seed.json.code, 'NODE_NOT_PROVISIONING')
    assert.equal(seed.json.data.status, 'active')
    assert.match(seed.json.message, /build-1 is active.*replace the certificate/)
    assert.ok(seed.json.actions.some((a: string) => a.includes('--reissue')))
    assert.ok(!existsSync(join(dir, 'refused.user-data')), 'no seed written')
    const token = await runFleetkit(['node', 'token', 'build-1', ...EXAMPLE, '--json'], { env })
    assertMatchesOutputSchema('node-token', token.json)
    assert.equal(token.json.code, 'NODE_NOT_PROVISIONING')
    assert.deepEqual(await snapshot('build-1'), before)
  })

  it('--reissue to an enrolled node and --rekey of a pinned key are not confirmed without a terminal: CONFIRMATION_REQUIRED naming --yes; nothing changes', async () => {
    const before = await snapshot('build-1')
    const token = await runFleetkit(['node', 'token', 'build-1', '--reissue', ...EXAMPLE, '--json'], { env })
    assert.equal(token.json.code, 'CONFIRMATION_REQUIRED', token.stdout)
    assert.match(token.json.message, /new enrollment secret: whoever holds it can enroll as build-1/)
    assert.ok(token.json.actions.includes(`fleetkit node token ${AS_GIVEN} build-1 --reissue --yes`))
    assertMatchesOutputSchema('node-token', token.json)
    const output = join(dir, 'unconfirmed.user-data')
    const seed = await runFleetkit(
      ['seed', 'build-1', '--kind', 'agent', '--reissue', ...EXAMPLE, '--output', output],
      {
        env,
      },
    )
    assert.equal(seed.code, 2)
    assert.match(
      seed.stderr,
      /^Error \(CONFIRMATION_REQUIRED\): give build-1 \(active, enrolled\) .* so it needs --yes; nothing changed$/m,
    )
    assert.ok(!existsSync(output), 'no seed written')
    assert.deepEqual(await snapshot('build-1'), before)
    const rekey = await runFleetkit(
      ['seed', 'app-2', '--kind', 'worker', '--rekey', ...EXAMPLE, '--output', output, '--json'],
      {
        env,
      },
    )
    assert.equal(rekey.json.code, 'CONFIRMATION_REQUIRED', rekey.stdout)
    assert.match(rekey.json.message, /replace the pinned SSH host key of app-2/)
    assert.ok(!existsSync(output), 'no seed written')
  })

  it('a seed never silently replaces a pending seed of the other kind (SEED_KIND_PENDING naming it); --yes replaces it on purpose', async () => {
    const agentSeed = join(dir, 'app-1-agent.user-data')
    const workerSeed = join(dir, 'app-1-worker.user-data')
    assert.equal(
      (await runFleetkit(['seed', 'app-1', '--kind', 'agent', '--rekey', ...EXAMPLE, '--output', agentSeed], { env }))
        .code,
      0,
    )
    const pendingAgent = await snapshot('app-1')
    const worker = await runFleetkit(
      ['seed', 'app-1', '--kind', 'worker', '--rekey', ...EXAMPLE, '--output', workerSeed, '--json'],
      { env },
    )
    assert.equal(worker.json.code, 'SEED_KIND_PENDING', worker.stdout)
    assert.equal(worker.json.data.pendingKind, 'agent')
    assert.match(
      worker.json.message,
      /^write a worker seed for app-1, which has a pending agent seed \(its enrollment secret unused, valid until /,
    )
    assert.ok(
      worker.json.actions.some((a: string) =>
        a.startsWith(`fleetkit seed ${AS_GIVEN} app-1 --kind worker --rekey --yes`),
      ),
    )
    assertMatchesOutputSchema('seed', worker.json)
    assert.ok(!existsSync(workerSeed), 'no seed written')
    assert.deepEqual(await snapshot('app-1'), pendingAgent)
    const replaced = await runFleetkit(
      ['seed', 'app-1', '--kind', 'worker', '--rekey', '--yes', ...EXAMPLE, '--output', workerSeed, '--json'],
      { env },
    )
    assert.equal(replaced.code, 0, replaced.stdout + replaced.stderr)
    assert.ok(existsSync(workerSeed))

    // The other way round: db-1 booted from a worker seed (host key pinned, never enrolled).
    const dbWorker = join(dir, 'db-1-worker.user-data')
    const dbAgent = join(dir, 'db-1-agent.user-data')
    const first = await runFleetkit(
      ['seed', 'db-1', '--kind', 'worker', '--rekey', '--yes', ...EXAMPLE, '--output', dbWorker],
      { env },
    )
    assert.equal(first.code, 0, first.stderr)
    const pendingWorker = await snapshot('db-1')
    const agent = await runFleetkit(['seed', 'db-1', '--kind', 'agent', '--rekey', ...EXAMPLE, '--output', dbAgent], {
      env,
    })
    assert.equal(agent.code, 1)
    assert.match(
      agent.stderr,
      /^Error \(SEED_KIND_PENDING\): write an agent seed for db-1, which has a pending worker seed .*; there is no terminal to ask on, so it needs --yes; nothing changed$/m,
    )
    assert.ok(!existsSync(dbAgent), 'no seed written')
    assert.deepEqual(await snapshot('db-1'), pendingWorker)
    const agentYes = await runFleetkit(
      ['seed', 'db-1', '--kind', 'agent', '--rekey', '--yes', ...EXAMPLE, '--output', dbAgent],
      {
        env,
      },
    )
    assert.equal(agentYes.code, 0, agentYes.stderr)
    assert.equal((await snapshot('db-1')).status, 'provisioning')
  })

  /** examples/fleet.yaml with app-3, a node that declares ssh.user but no hostKey (its first seed pins one). */
  function definitionWithApp3(): string[] {
    const file = join(dir, 'fleet-app-3.yaml')
    const text = readFileSync(packagePath('examples', 'fleet.yaml'), 'utf8')
    const app3 = '  - id: app-3\n    pool: application\n    state: active\n    ssh: { user: fleetkit }\n'
    assert.ok(text.includes('  - id: db-1\n'))
    writeFileSync(file, text.replace('  - id: db-1\n', `${app3}  - id: db-1\n`))
    return ['--definition', file]
  }

  it('a worker seed that pins a first host key records host_key_pinned (who, the public key, via seed), never the private half', async () => {
    const output = join(dir, 'app-3-worker.user-data')
    const seed = await runFleetkit(
      ['seed', 'app-3', '--kind', 'worker', ...definitionWithApp3(), '--output', output, '--json'],
      { env },
    )
    assert.equal(seed.code, 0, seed.stdout + seed.stderr)
    assert.equal(seed.json.result.rekeyed, false)
    const { rows } = await db.pool.query<{ kind: string; data: Record<string, unknown> }>(
      "SELECT kind, data FROM events WHERE node_id = 'app-3' ORDER BY id",
    )
    assert.deepEqual(rows, [
      {
        kind: 'host_key_pinned',
        data: { actor: 'alice@ops', host_key: seed.json.result.hostKeyPublic, via: 'seed' },
      },
    ])
    assert.match(readFileSync(output, 'utf8'), /PRIVATE KEY/, 'the seed holds the private half')
    assert.ok(!JSON.stringify(rows).includes('PRIVATE KEY'), 'the event does not')
  })

  it('node token never silently replaces a pending worker seed either (SEED_KIND_PENDING naming --yes); --yes issues it on purpose', async () => {
    // app-3 is provisioning from the worker seed above: its host key pinned, its host not enrolled.
    const pendingWorker = await snapshot('app-3')
    const token = await runFleetkit(['node', 'token', 'app-3', ...definitionWithApp3(), '--json'], { env })
    assertMatchesOutputSchema('node-token', token.json)
    assert.equal(token.json.code, 'SEED_KIND_PENDING', token.stdout)
    assert.equal(token.json.data.pendingKind, 'worker')
    assert.match(
      token.json.message,
      /^issue an enrollment secret for app-3, which has a pending worker seed \(its SSH host key pinned, the host not enrolled yet\)/,
    )
    assert.ok(
      token.json.actions.some((a: string) => /^fleetkit node token --definition \S+ app-3 --yes/.test(a)),
      token.stdout,
    )
    assert.ok(!('secret' in token.json), 'no secret printed')
    assert.deepEqual(await snapshot('app-3'), pendingWorker)
    const human = await runFleetkit(['node', 'token', 'app-3', ...definitionWithApp3()], { env })
    assert.equal(human.code, 1)
    assert.equal(human.stdout, '', 'no secret printed')
    assert.match(
      human.stderr,
      /^Error \(SEED_KIND_PENDING\): issue an enrollment secret for app-3, .* it needs --yes; nothing changed$/m,
    )
    assert.deepEqual(await snapshot('app-3'), pendingWorker)
    // fleetkit sync hands the secret over SSH to the host its pinned key proves, the worker seed's own: not asked.
    const handOver = {
      pool: db.pool,
      nodeId: 'app-3',
      ttlMs: 600_000,
      loadDefinition: () => Promise.reject(new Error('app-3 is in the state')),
      actor: 'sync',
      clock: systemClock,
      rng: systemRng,
    }
    await assert.rejects(issueNodeToken(handOver), (e: FleetkitError) => e.code === 'SEED_KIND_PENDING')
    assert.deepEqual(await snapshot('app-3'), pendingWorker)
    const synced = await issueNodeToken({ ...handOver, toPinnedHost: true })
    assert.equal(synced.reissued, false)
    // Back as the worker seed left it (a pending worker seed), for the operator's --yes.
    await db.pool.query(
      "UPDATE nodes SET enrollment_secret_sha256 = NULL, enrollment_secret_expires_at = NULL WHERE id = 'app-3'",
    )
    const yes = await runFleetkit(['node', 'token', 'app-3', '--yes', ...definitionWithApp3(), '--json'], { env })
    assert.equal(yes.code, 0, yes.stdout + yes.stderr)
    const after = await snapshot('app-3')
    assert.equal(after.status, 'provisioning')
    assert.notEqual(after.hash, null)
  })

  it('a secret fleetkit sync issues when it enrolls a host is recorded as issued via sync, not node token', async () => {
    const definition = validDefinition()
    definition.nodes.push({
      id: 'sync-1',
      pool: 'build',
      state: 'active',
      ssh: { host: '10.1.0.31', user: 'fleetkit' },
    })
    // What `fleetkit sync` wires (syncRuntime), not the `node token` command.
    const runtime = await syncRuntime(
      {
        pool: db.pool,
        actor: 'alice@ops',
        clock: systemClock,
        signal: new AbortController().signal,
        progress: Object.assign(() => {}, { done: () => {} }),
      },
      env,
    )
    const issued = await runtime.enrollment!.issueSecret('sync-1', false, definition)
    assert.equal(issued.reissued, false)
    const { rows } = await db.pool.query<{ kind: string; data: Record<string, unknown> }>(
      "SELECT kind, data FROM events WHERE node_id = 'sync-1' ORDER BY id",
    )
    assert.deepEqual(
      rows.map((r) => [r.kind, r.data.via, r.data.actor]),
      [['secret_issued', 'sync', 'alice@ops']],
    )
  })

  it('--reissue gives an enrolled node a new secret, keeps its status and records secret_reissued (who, via, previous status)', async () => {
    const before = await snapshot('build-1')
    const output = join(dir, 'build-1-reissued.user-data')
    const seed = await runFleetkit(
      ['seed', 'build-1', '--kind', 'agent', '--rekey', '--reissue', '--yes', ...EXAMPLE, '--output', output, '--json'],
      { env },
    )
    assert.equal(seed.code, 0, seed.stderr)
    assertMatchesOutputSchema('seed', seed.json)
    assert.equal(seed.json.result.reissued, true)
    const after = await snapshot('build-1')
    assert.equal(after.status, 'active', 'the agent keeps authenticating until it enrolls with the new secret')
    assert.notEqual(after.hash, before.hash)
    assert.equal(after.reissued, true)
    const token = await runFleetkit(['node', 'token', 'build-1', '--reissue', '--yes', ...EXAMPLE, '--json'], { env })
    assert.equal(token.code, 0, token.stderr)
    assertMatchesOutputSchema('node-token', token.json)
    assert.equal(token.json.result.reissued, true)
    const { rows } = await db.pool.query(
      "SELECT data FROM events WHERE node_id = 'build-1' AND kind = 'secret_reissued' ORDER BY id",
    )
    assert.deepEqual(
      rows.map((r: { data: Record<string, unknown> }) => [r.data.actor, r.data.via, r.data.previous_status]),
      [
        ['alice@ops', 'seed', 'active'],
        ['alice@ops', 'node token', 'active'],
      ],
    )
    for (const r of rows as { data: Record<string, unknown> }[])
      assert.ok(!JSON.stringify(r.data).includes(token.json.result.secret as string))
  })

  it('a retired node is refused even with --reissue; parked and failed nodes become provisioning with it', async () => {
    await db.pool.query(
      "INSERT INTO nodes (id, pool, status) VALUES ('build-2', 'build', 'retired'), ('build-3', 'build', 'failed')",
    )
    const retired = await runFleetkit(['node', 'token', 'build-2', '--reissue', '--yes', ...EXAMPLE, '--json'], { env })
    assert.equal(retired.json.code, 'NODE_NOT_PROVISIONING')
    assert.equal((await snapshot('build-2')).hash, null)
    const failed = await runFleetkit(['node', 'token', 'build-3', ...EXAMPLE, '--json'], { env })
    assert.equal(failed.json.code, 'NODE_NOT_PROVISIONING')
    assert.match(failed.json.message, /build-3 is failed.*provisioning again/)
    const reissued = await runFleetkit(['node', 'token', 'build-3', '--reissue', '--yes', ...EXAMPLE, '--json'], {
      env,
    })
    assert.equal(reissued.code, 0, reissued.stderr)
    assert.equal((await snapshot('build-3')).status, 'provisioning')
  })

  it('a provisioning node whose secret is pending is refused (NODE_SECRET_PENDING): a seed printed to look at it never replaces the one already out', async () => {
    const before = await snapshot('build-3')
    // The whole seed fits the pipe and is read: nothing can tell this from a real use but the refusal.
    const seed = await runFleetkit(['seed', 'build-3', '--kind', 'agent', '--rekey', ...EXAMPLE, '--output', '-'], {
      env,
    })
    assert.notEqual(seed.code, 0)
    assert.match(
      seed.stderr,
      /Error \(NODE_SECRET_PENDING\): node build-3 is provisioning with an unused secret valid until /,
    )
    assert.equal(seed.stdout, '', 'no seed is printed')
    const token = await runFleetkit(['node', 'token', 'build-3', ...EXAMPLE, '--json'], { env })
    assert.equal(token.json.code, 'NODE_SECRET_PENDING', token.stdout)
    assert.equal(token.json.data.status, 'provisioning')
    assert.deepEqual(await snapshot('build-3'), before)
  })

  it('a node whose node provision run is under way is refused a seed and a token (PROVISION_IN_PROGRESS); nothing changes', async () => {
    // app-2 registered by a token, then taken over by a provision run waiting for its server to enroll.
    const token = await runFleetkit(['node', 'token', 'app-2', ...EXAMPLE, '--json'], { env })
    assert.equal(token.code, 0, token.stderr)
    await db.pool.query("UPDATE nodes SET provision_state = 'awaiting_enrollment' WHERE id = 'app-2'")
    const before = await snapshot('app-2')
    const output = join(dir, 'provisioning.user-data')
    const seed = await runFleetkit(
      ['seed', 'app-2', '--kind', 'agent', '--reissue', '--rekey', '--yes', ...EXAMPLE, '--output', output, '--json'],
      { env },
    )
    assertMatchesOutputSchema('seed', seed.json)
    assert.equal(seed.json.code, 'PROVISION_IN_PROGRESS', seed.stdout)
    assert.equal(seed.json.data.state, 'awaiting_enrollment')
    assert.ok(seed.json.actions.some((a: string) => a.startsWith(`fleetkit node provision ${AS_GIVEN} --resume app-2`)))
    assert.ok(!existsSync(output), 'no seed written')
    const reissue = await runFleetkit(['node', 'token', 'app-2', '--reissue', '--yes', ...EXAMPLE, '--json'], { env })
    assert.equal(reissue.json.code, 'PROVISION_IN_PROGRESS', reissue.stdout)
    assert.deepEqual(await snapshot('app-2'), before)
  })

  describe('a seed that cannot be written leaves the state exactly as it was', () => {
    /** build-3 is provisioning with a pending secret; build-1 is active (enrolled): each replaced on purpose. */
    const cases: [string, string[]][] = [
      ['build-3', ['--reissue', '--yes']],
      ['build-1', ['--reissue', '--yes']],
    ]

    it('--output in a directory that does not exist: OUTPUT_WRITE_FAILED (ENOENT)', async () => {
      for (const [node, extra] of cases) {
        const before = await snapshot(node)
        const ran = await runFleetkit(
          [
            'seed',
            node,
            '--kind',
            'agent',
            '--rekey',
            ...extra,
            ...EXAMPLE,
            '--output',
            join(dir, 'missing', 'x.user-data'),
            '--json',
          ],
          { env },
        )
        assertMatchesOutputSchema('seed', ran.json)
        assert.equal(ran.json.code, 'OUTPUT_WRITE_FAILED', ran.stdout)
        assert.equal(ran.json.data.errno, 'ENOENT')
        assert.deepEqual(await snapshot(node), before, node)
      }
    })

    // The seed used to be staged beside the directory and stored, then the rename failed after the commit:
    // the node was provisioning with a secret nobody held, and only --reissue --rekey got out of it.
    it('--output naming a directory: OUTPUT_WRITE_FAILED (EISDIR), before anything is stored', async () => {
      const outputDir = join(dir, 'a-directory')
      mkdirSync(outputDir)
      for (const [node, extra] of cases) {
        const before = await snapshot(node)
        const ran = await runFleetkit(
          ['seed', node, '--kind', 'agent', '--rekey', ...extra, ...EXAMPLE, '--output', outputDir, '--json'],
          { env },
        )
        assertMatchesOutputSchema('seed', ran.json)
        assert.equal(ran.json.code, 'OUTPUT_WRITE_FAILED', ran.stdout)
        assert.equal(ran.json.data.errno, 'EISDIR')
        assert.equal(ran.json.data.committed, false)
        assert.deepEqual(await snapshot(node), before, node)
        assert.deepEqual(readdirSync(outputDir), [], 'nothing written into it')
        assert.deepEqual(
          readdirSync(dir).filter((name) => name.startsWith('.a-directory')),
          [],
          'no staged seed beside it',
        )
      }
    })

    it('--output on a full 16 KiB tmpfs: OUTPUT_WRITE_FAILED (ENOSPC), no partial file left', async () => {
      tiny = join(dir, 'tiny')
      mkdirSync(tiny)
      const mounted = await runProcess('mount', ['-t', 'tmpfs', '-o', 'size=16k,mode=0700', 'tmpfs', tiny])
      if (mounted.code !== 0)
        throw new Error(`mount tmpfs exited ${mounted.code}: these tests run as root (${mounted.stderr.trim()})`)
      for (const [node, extra] of cases) {
        const before = await snapshot(node)
        const ran = await runFleetkit(
          [
            'seed',
            node,
            '--kind',
            'agent',
            '--rekey',
            ...extra,
            ...EXAMPLE,
            '--output',
            join(tiny, `${node}.user-data`),
            '--json',
          ],
          { env },
        )
        assert.equal(ran.json.code, 'OUTPUT_WRITE_FAILED', ran.stdout)
        assert.equal(ran.json.data.errno, 'ENOSPC')
        assert.deepEqual(readdirSync(tiny), [], 'neither the seed nor its temporary file is left')
        assert.deepEqual(await snapshot(node), before, node)
      }
    })
  })

  describe('a secret printed to stdout is printed only after it is stored: a stdout that fails then says so on stderr', () => {
    const cases: [string, string[]][] = [
      ['build-3', ['--reissue', '--yes']],
      ['build-1', ['--reissue', '--yes']],
    ]
    /**
     * The run stored its secret (a new hash and secret_reissued; a seed of these nodes, which declare
     * ssh.user and a pinned key, host_key_replaced too) that nobody saw; --reissue replaces it.
     */
    async function assertStoredUnseen(node: string, before: Snapshot, stderr: string, next: RegExp, events = 2) {
      const after = await snapshot(node)
      assert.notEqual(after.hash, before.hash, node)
      assert.equal(after.events, before.events + events, node)
      assert.match(stderr, /never shown, and cannot be shown again/)
      assert.match(stderr, next)
    }

    it('--output - into /dev/full: OUTPUT_WRITE_FAILED (ENOSPC) after the commit; the next --reissue replaces the unseen secret', async () => {
      for (const [node, extra] of cases) {
        const before = await snapshot(node)
        const full = openSync('/dev/full', 'w')
        try {
          const ran = await runWithStdout(
            ['seed', node, '--kind', 'agent', '--rekey', ...extra, ...EXAMPLE, '--output', '-'],
            full,
          )
          assert.notEqual(ran.code, 0)
          assert.match(
            ran.stderr,
            /Error \(OUTPUT_WRITE_FAILED\): could not write standard output \(ENOSPC\) after the agent seed of build-\d was stored/,
          )
          await assertStoredUnseen(
            node,
            before,
            ran.stderr,
            /fleetkit seed --definition examples\/fleet\.yaml build-\d --kind agent --reissue/,
          )
        } finally {
          closeSync(full)
        }
      }
    })

    it('--output - into a pipe whose reader is gone (| head -c 100 on a long seed): OUTPUT_WRITE_FAILED (EPIPE) after the commit', async () => {
      for (const [node, extra] of cases) {
        const before = await snapshot(node)
        const ran = await runWithStdout(
          ['seed', node, '--kind', 'agent', '--rekey', ...extra, ...EXAMPLE, '--output', '-'],
          'closed',
        )
        assert.notEqual(ran.code, 0)
        assert.match(ran.stderr, /Error \(OUTPUT_WRITE_FAILED\): could not write standard output \(EPIPE\) after/)
        await assertStoredUnseen(node, before, ran.stderr, /--reissue/)
      }
    })

    it('node token into a pipe whose reader is gone: the stored secret is reported unseen, with the command that replaces it', async () => {
      const before = await snapshot('build-3')
      const ran = await runWithStdout(['node', 'token', 'build-3', '--reissue', '--yes', ...EXAMPLE], 'closed')
      assert.notEqual(ran.code, 0)
      assert.match(
        ran.stderr,
        /Error \(OUTPUT_WRITE_FAILED\): could not write standard output \(EPIPE\) after the new enrollment secret of build-3 was stored/,
      )
      await assertStoredUnseen(
        'build-3',
        before,
        ran.stderr,
        /fleetkit node token --definition examples\/fleet\.yaml build-3 --reissue/,
        1,
      )
    })

    it('node token --json into /dev/full: the failure is on stderr with its code, never silent (stdout is what failed)', async () => {
      const before = await snapshot('build-3')
      const full = openSync('/dev/full', 'w')
      try {
        const ran = await runWithStdout(['node', 'token', 'build-3', '--reissue', '--yes', ...EXAMPLE, '--json'], full)
        assert.notEqual(ran.code, 0)
        assert.match(ran.stderr, /Error \(OUTPUT_WRITE_FAILED\): could not write standard output \(ENOSPC\)/)
        await assertStoredUnseen(
          'build-3',
          before,
          ran.stderr,
          /fleetkit node token --definition examples\/fleet\.yaml build-3 --reissue/,
          1,
        )
      } finally {
        closeSync(full)
      }
    })
  })
})
