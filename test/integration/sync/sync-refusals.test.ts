// `fleetkit sync` refusals that need no host: each is decided before any ansible-playbook starts
// (a bad --ref, a held lock, an unknown run, no targets), on a real PostgreSQL and a real Git repository.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { stringify } from 'yaml'

import {
  createSyncRun,
  finishSyncRun,
  listUnfinishedSyncRuns,
  SYNC_LOCK_KEY,
  tryAdvisoryLock,
} from '../../../src/store/sync-ledger.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { validDefinition } from '../../support/definition-fixture.js'
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
    assert.match(run.json.actions.join('\n'), /fleetkit sync --plan-hash [0-9a-f]{64}/)
  })
})
