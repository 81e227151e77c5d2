// `fleetkit sync` refusals that need no host: each is decided before any ansible-playbook starts
// (a bad --ref, a held lock, an unknown run, no targets), on a real PostgreSQL and a real Git repository.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { stringify } from 'yaml'

import {
  createSyncRun,
  finishSyncRun,
  getSyncRun,
  listUnfinishedSyncRuns,
  SYNC_LOCK_KEY,
} from '../../../src/store/sync/sync-ledger.js'
import { tryAdvisoryLock } from '../../../src/store/advisory-lock.js'
import { upsertDeclaredNode } from '../../../src/store/nodes/nodes.js'
import { assertMatchesOutputSchema, fleetkitEntry, runFleetkit } from '../../support/cli.js'
import { validDefinition } from '../../support/definition-fixture.js'
import { eventually } from '../../support/eventually.js'
import { overlayEnv, startProcess } from '../../support/process.js'
import {
  freshDatabase,
  startDisposablePostgres,
  type DisposablePostgres,
  type FreshDatabase,
} from '../../support/postgres.js'

describe('fleetkit sync: refusals before anything runs', function () {
  this.timeout(120_000)
  let server: DisposablePostgres
  let db: FreshDatabase
  let dir: string
  let fleet: string
  let sha: string
  let env: NodeJS.ProcessEnv

  before(async () => {
    server = await startDisposablePostgres()
    db = await freshDatabase(server.url)
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-sync-refusals-'))
    fleet = join(dir, 'fleet.yaml')
    await writeFile(fleet, stringify(validDefinition()))
    execFileSync('git', ['init', '-q', dir])
    execFileSync('git', [
      '-C',
      dir,
      '-c',
      'user.email=t@fleet.internal',
      '-c',
      'user.name=t',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'empty',
    ])
    execFileSync('git', ['-C', dir, 'add', 'fleet.yaml'])
    execFileSync('git', [
      '-C',
      dir,
      '-c',
      'user.email=t@fleet.internal',
      '-c',
      'user.name=t',
      'commit',
      '-q',
      '-m',
      'fleet',
    ])
    sha = execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim()
    env = { DATABASE_URL: db.url, FLEETKIT_STATE_DIR: join(dir, 'state') }
  })
  after(async () => {
    await db?.drop()
    await server?.stop()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  const sync = (args: string[]) => runFleetkit(['sync', '--definition', fleet, ...args, '--json'], { env })

  it('--ref takes only a full commit SHA of the fleet repository', async () => {
    for (const ref of ['main', sha.slice(0, 12), 'HEAD']) {
      const run = await sync(['--ref', ref])
      assert.equal(run.code, 2, run.stdout)
      assert.equal(run.json.code, 'SYNC_REF_INVALID')
      assertMatchesOutputSchema('sync', run.json)
    }
    const absent = await sync(['--ref', 'f'.repeat(40)])
    assert.equal(absent.json.code, 'SYNC_REF_INVALID')
    assert.match(absent.json.message, /is not a commit of the repository/)
  })

  it('--limit naming only a disabled node has nothing to sync; a node nobody knows is SYNC_TARGET_UNKNOWN', async () => {
    const disabled = validDefinition()
    disabled.nodes[1]!.state = 'disabled'
    const path = join(dir, 'disabled.yaml')
    await writeFile(path, stringify(disabled))
    const none = await runFleetkit(['sync', '--definition', path, '--limit', 'db-1', '--json'], { env })
    assert.equal(none.code, 2, none.stdout)
    assert.equal(none.json.code, 'SYNC_NO_TARGETS')
    assert.match(none.json.message, /db-1 \(disabled in the definition\)/)
    const unknown = await sync(['--limit', 'nope-1'])
    assert.equal(unknown.json.code, 'SYNC_TARGET_UNKNOWN')
  })

  it('a lost node that heartbeats again has nothing to sync until node admit, which the refusal names (not unpark)', async () => {
    await upsertDeclaredNode(db.pool, { id: 'db-1', pool: 'database', status: 'lost' })
    await db.pool.query(
      `UPDATE nodes SET lost_at = now() - interval '10 minutes', last_seen_at = now() WHERE id = 'db-1'`,
    )
    try {
      const none = await sync(['--ref', sha, '--limit', 'db-1'])
      assert.equal(none.code, 2, none.stdout)
      assert.equal(none.json.code, 'SYNC_NO_TARGETS')
      assert.match(none.json.message, /: db-1 \(lost, heartbeating again: admit it back first\)$/)
      // The CLI names the definition it was given in each command that reads one.
      const actions = none.json.actions as string[]
      assert.ok(
        actions.some((a) => /^fleetkit node admit (--definition \S+ )?db-1$/.test(a)),
        actions.join('\n'),
      )
      assert.ok(!actions.some((a) => a.includes('unpark')), actions.join('\n'))
      assertMatchesOutputSchema('sync', none.json)
    } finally {
      await db.pool.query(`DELETE FROM nodes WHERE id = 'db-1'`)
    }
  })

  it('a second sync gets SYNC_IN_PROGRESS naming the run that holds the lock, and starts nothing', async () => {
    const holder = await db.pool.connect()
    try {
      assert.equal(await tryAdvisoryLock(holder, SYNC_LOCK_KEY), true)
      const run = await createSyncRun(holder, {
        kind: 'sync',
        revision: sha,
        definitionSha256: 'd'.repeat(64),
        planHash: 'e'.repeat(64),
        plan: {},
        startedBy: 'alice@ops-1',
        pid: 4711,
        nodes: [],
      })
      const second = await sync(['--ref', sha])
      assert.equal(second.code, 23, second.stdout)
      assert.equal(second.json.code, 'SYNC_IN_PROGRESS')
      assert.match(second.json.message, new RegExp(`run ${run.id}, started by alice@ops-1 \\(pid 4711\\)`))
      assertMatchesOutputSchema('sync', second.json)
      assert.deepEqual(
        (await listUnfinishedSyncRuns(db.pool)).map((r) => r.id),
        [run.id],
        'the refused sync recorded no run',
      )
    } finally {
      holder.release(new Error('drop the session and its lock'))
    }
  })

  it('a node with no pinned host key is SSH_HOST_KEY_NOT_PINNED (not a mismatch), before anything dials it', async () => {
    // db-1 declares no hostKey and no seed pinned one in the state; its address does not even resolve here.
    const run = await sync(['--limit', 'db-1', '--dry-run'])
    assertMatchesOutputSchema('sync', run.json)
    const node = run.json.data.report.nodes.find((n: { node: string }) => n.node === 'db-1')
    assert.equal(node.state, 'failed', run.stdout)
    assert.equal(node.code, 'SSH_HOST_KEY_NOT_PINNED')
    assert.match(node.message, /node db-1 has no pinned SSH host key/)
  })

  it('--resume of a run that does not exist is SYNC_RUN_UNKNOWN; --resume with --dry-run is refused', async () => {
    const run = await sync(['--ref', sha, '--resume', '999'])
    assert.equal(run.code, 2, run.stdout)
    assert.equal(run.json.code, 'SYNC_RUN_UNKNOWN')
    const dry = await sync(['--ref', sha, '--resume', '1', '--dry-run'])
    assert.equal(dry.json.code, 'USAGE_INVALID')
  })

  it('drift without --ref compares with the applied revision, and says so when it is not a commit of the fleet repository', async () => {
    const applied = await createSyncRun(db.pool, {
      kind: 'sync',
      revision: 'a'.repeat(40),
      definitionSha256: 'd'.repeat(64),
      planHash: 'e'.repeat(64),
      plan: { limited: false, tags: [] },
      startedBy: 'alice@ops-1',
      pid: 4711,
      nodes: [],
    })
    await finishSyncRun(db.pool, applied.id, 'converged')
    const drift = await runFleetkit(['drift', '--definition', fleet, '--json'], { env })
    assert.equal(drift.code, 2, drift.stdout)
    assert.equal(drift.json.code, 'SYNC_REF_INVALID')
    assert.match(
      drift.json.message,
      new RegExp(`the revision run ${applied.id} applied \\(a{40}\\) is not a commit of the repository`),
    )
    assertMatchesOutputSchema('drift', drift.json)
  })

  it('--plan-hash of another plan is SYNC_PLAN_STALE before the lock or the hosts are touched', async () => {
    const run = await sync(['--ref', sha, '--plan-hash', '0'.repeat(64)])
    assert.equal(run.code, 24, run.stdout)
    assert.equal(run.json.code, 'SYNC_PLAN_STALE')
    assert.match(run.json.actions.join('\n'), /fleetkit sync --definition \S+ --plan-hash [0-9a-f]{64}/)
  })

  it('FLEETKIT_SYNC_STRATEGY and FLEETKIT_SYNC_HEARTBEAT_TIMEOUT_SECONDS are flags: a bad value is USAGE_INVALID', async () => {
    for (const bad of [{ FLEETKIT_SYNC_STRATEGY: 'parallel' }, { FLEETKIT_SYNC_HEARTBEAT_TIMEOUT_SECONDS: '0' }]) {
      const run = await runFleetkit(['sync', '--definition', fleet, '--ref', sha, '--json'], {
        env: { ...env, ...bad },
      })
      assert.equal(run.code, 2, run.stdout)
      assert.equal(run.json.code, 'USAGE_INVALID')
    }
  })

  it("a harness's FLEETKIT_SYNC_EXTRA_VARS_FILE is part of the plan: the command hands it to the run", async () => {
    const planWith = async (vars: string | undefined) => {
      const run = await runFleetkit(
        ['sync', '--definition', fleet, '--ref', sha, '--plan-hash', '0'.repeat(64), '--json'],
        { env: { ...env, FLEETKIT_SYNC_EXTRA_VARS_FILE: vars } },
      )
      assert.equal(run.json.code, 'SYNC_PLAN_STALE', run.stdout)
      return (run.json.data as { current: string }).current
    }
    const varsFile = join(dir, 'harness-vars.json')
    await writeFile(varsFile, JSON.stringify({ preflight_allow_container: true }))
    const bare = await planWith(undefined)
    const withVars = await planWith(varsFile)
    assert.notEqual(withVars, bare, 'the file is in the plan')
    assert.equal(await planWith(` ${varsFile} `), withVars, 'the same file, however it is spaced')
    assert.equal(await planWith(''), bare, 'empty is unset')
    await writeFile(varsFile, JSON.stringify({ preflight_allow_container: false }))
    assert.notEqual(await planWith(varsFile), withVars, 'its content, not its name')
  })

  it("Ctrl-C names `fleetkit sync --resume RUN` and exits 130; --resume reuses the run's --limit and --tags, and refuses others", async () => {
    // A stand-in ansible-playbook: records its command line, then holds (the first call) or fails at once.
    const bin = join(dir, 'fake-bin')
    await mkdir(bin, { recursive: true })
    const calls = join(dir, 'ansible-calls')
    const hold = join(dir, 'ansible-hold')
    await writeFile(
      join(bin, 'ansible-playbook'),
      `#!/bin/sh\nprintf '%s\\n' "$*" >> '${calls}'\n[ -e '${hold}' ] && exec tail -f /dev/null\nexit 1\n`,
    )
    await chmod(join(bin, 'ansible-playbook'), 0o755)
    await writeFile(hold, '')
    const fakeEnv = { ...env, PATH: `${bin}:${process.env.PATH}` }
    const first = startProcess(
      process.execPath,
      [fleetkitEntry(), 'sync', '--definition', fleet, '--ref', sha, '--limit', 'build-1', '--tags', 'br_netfilter'],
      { env: overlayEnv(fakeEnv) },
    )
    try {
      await eventually(
        'ansible-playbook started by the first sync',
        async () => (await readFile(calls, 'utf8').catch(() => '')) || undefined,
        {
          timeoutMs: 60_000,
          stop: () => (first.exit() ? `the sync exited (${first.exit()?.code}): ${first.stderr()}` : undefined),
        },
      )
      first.child.kill('SIGINT')
      const ended = await first.exited
      assert.equal(ended.code, 130, `${JSON.stringify(ended)} ${first.stderr()}`)
    } finally {
      await first.stop('SIGKILL', 1000)
    }
    const runId = (await listUnfinishedSyncRuns(db.pool))[0]!.id
    assert.match(
      first.stderr(),
      /^Error \(COMMAND_INTERRUPTED\): stopped by SIGINT.*; run \d+ is left open to finish$/m,
    )
    assert.match(first.stderr(), new RegExp(`^  fleetkit sync --definition \\S+ --resume ${runId}$`, 'm'))

    await rm(hold)
    const resume = (args: string[]) =>
      runFleetkit(['sync', '--definition', fleet, '--ref', sha, '--resume', String(runId), ...args, '--json'], {
        env: fakeEnv,
      })
    const otherTags = await resume(['--tags', 'firewall'])
    assert.equal(otherTags.code, 2, otherTags.stdout)
    assert.equal(otherTags.json.code, 'SYNC_RESUME_SCOPE_CHANGED')
    assert.match(otherTags.json.message, /started with --limit build-1, --tags br_netfilter; this resume asks for/)
    assertMatchesOutputSchema('sync', otherTags.json)
    const otherLimit = await resume(['--limit', 'db-1'])
    assert.equal(otherLimit.json.code, 'SYNC_RESUME_SCOPE_CHANGED')
    assert.equal((await readFile(calls, 'utf8')).trim().split('\n').length, 1, 'a refused resume runs nothing')

    // Neither flag repeated: the run's own, not SYNC_PLAN_STALE (the stand-in then fails the canary).
    const resumed = await resume([])
    assert.notEqual(resumed.json.code, 'SYNC_PLAN_STALE', resumed.stdout)
    assert.equal(resumed.json.data?.report?.runId ?? resumed.json.result?.runId, runId, resumed.stdout)
    const second = (await readFile(calls, 'utf8')).trim().split('\n')[1]!
    assert.match(second, /--limit build-1 --tags br_netfilter$/)
    assert.equal((await getSyncRun(db.pool, runId))?.attempts, 2)

    // The resumed run ended with its node not converged: its error names the same resume, which
    // reopens the finished run and runs what did not converge again.
    assert.equal((await getSyncRun(db.pool, runId))?.status, 'finished', resumed.stdout)
    assert.ok(
      resumed.json.actions?.some((a: string) =>
        new RegExp(`^fleetkit sync( --definition \\S+)? --resume ${runId}$`).test(a),
      ),
      resumed.stdout,
    )
    const again = await resume([])
    assert.equal(again.json.data?.report?.runId, runId, again.stdout)
    assert.equal((await getSyncRun(db.pool, runId))?.attempts, 3)
    assert.equal((await readFile(calls, 'utf8')).trim().split('\n').length, 3, 'the second resume ran ansible again')
  })

  it('--resume of a run that converged is SYNC_RUN_UNKNOWN and names how it ended', async () => {
    const run = await createSyncRun(db.pool, {
      kind: 'sync',
      revision: sha,
      definitionSha256: 'd'.repeat(64),
      planHash: 'e'.repeat(64),
      plan: {},
      startedBy: 'alice@ops-1',
      pid: 4711,
      nodes: [],
    })
    await finishSyncRun(db.pool, run.id, 'converged')
    const resumed = await sync(['--ref', sha, '--resume', String(run.id)])
    assert.equal(resumed.json.code, 'SYNC_RUN_UNKNOWN', resumed.stdout)
    assert.match(
      resumed.json.message,
      new RegExp(`no sync run ${run.id} to finish \\(it is a sync run, finished: converged\\)`),
    )
    assert.equal((await getSyncRun(db.pool, run.id))?.attempts, 1, 'nothing reopened')
  })
})
