// `fleetkit seed` killed between its commit and its rename (strace -e inject=rename:signal=KILL) leaves
// the state holding the new secret and host key, the seed it committed staged as
// `seeds/.NODE.user-data.<12 hex>.tmp`, and at the final path the previous seed or nothing. Each test
// leaves exactly that on disk (a completed run's seed moved back to a staged name) and runs the
// command again: it finishes the rename, removes staged seeds the state no longer holds, and a
// refusal names the command that works. Real PostgreSQL, real CLI.
import assert from 'node:assert/strict'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { packagePath } from '../../../src/package-root.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import {
  type DisposablePostgres,
  type FreshDatabase,
  freshDatabase,
  startDisposablePostgres,
} from '../../support/postgres.js'

const EXAMPLE = ['--definition', 'examples/fleet.yaml']

describe('fleetkit seed killed between its commit and its rename: the next seed converges (real PostgreSQL)', function () {
  this.timeout(180_000)
  let server: DisposablePostgres
  let db: FreshDatabase
  let dir: string
  let seeds: string
  let env: Record<string, string>

  /** What the state holds of a node's seed: its secret's hash, its pinned key, its event count. */
  async function snapshot(id: string): Promise<{ hash: string | null; key: string | null; events: number }> {
    const { rows } = await db.pool.query<{ hash: string | null; key: string | null; events: string }>(
      `SELECT encode(enrollment_secret_sha256, 'hex') AS hash, host_key_public AS key,
              (SELECT count(*) FROM events WHERE node_id = $1) AS events
         FROM nodes WHERE id = $1`,
      [id],
    )
    return { ...rows[0]!, events: Number(rows[0]!.events) }
  }

  /** Runs a seed that completes, then leaves on disk what a kill at its rename leaves: its seed staged, `previous` at the final path. */
  async function seedKilledAtRename(node: string, args: string[], previous?: Buffer): Promise<string> {
    const ran = await runFleetkit(['seed', node, ...args, ...EXAMPLE, '--json'], { env })
    assert.equal(ran.code, 0, ran.stderr)
    const staged = join(seeds, `.${node}.user-data.d3fa288af686.tmp`)
    renameSync(join(seeds, `${node}.user-data`), staged)
    if (previous) writeFileSync(join(seeds, `${node}.user-data`), previous, { mode: 0o600 })
    return staged
  }

  before(async () => {
    server = await startDisposablePostgres()
    db = await freshDatabase(server.url)
    dir = mkdtempSync(join(tmpdir(), 'fleetkit-seed-interrupted-'))
    mkdirSync(join(dir, 'pki'), { mode: 0o700 })
    copyFileSync(
      packagePath('test', 'fixtures', 'cloud-init', 'gateway-ca-bundle.pem'),
      join(dir, 'pki', 'ca-bundle.pem'),
    )
    seeds = join(dir, 'state', 'seeds')
    env = {
      DATABASE_URL: db.url,
      FLEETKIT_PKI_DIR: join(dir, 'pki'),
      FLEETKIT_STATE_DIR: join(dir, 'state'),
      FLEETKIT_ACTOR: 'alice@ops',
    }
  })

  after(async () => {
    await db?.drop()
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('first seed: the re-run puts the staged seed into place and stores nothing; stale staged seeds of the node go, others stay', async () => {
    const staged = await seedKilledAtRename('build-1', ['--kind', 'agent', '--rekey'])
    const content = readFileSync(staged)
    const state = await snapshot('build-1')
    // A staged seed of an older killed run (its secret is not the stored one), another node's, and a name fleetkit never gives.
    const stale = join(seeds, '.build-1.user-data.0123456789ab.tmp')
    writeFileSync(stale, content.toString('utf8').replace(/\b[0-9a-f]{64}\b/g, 'f'.repeat(64)), { mode: 0o600 })
    const other = join(seeds, '.build-2.user-data.0123456789ab.tmp')
    const foreign = join(seeds, '.build-1.user-data.keep.tmp')
    writeFileSync(other, 'x', { mode: 0o600 })
    writeFileSync(foreign, 'x', { mode: 0o600 })

    // What the operator runs again (the exact command that was killed).
    const again = await runFleetkit(['seed', 'build-1', '--kind', 'agent', '--rekey', ...EXAMPLE, '--json'], { env })
    assert.equal(again.code, 0, again.stderr)
    assertMatchesOutputSchema('seed', again.json)
    assert.equal(again.json.result.finishedInterrupted, true)
    assert.equal(again.json.result.path, join(seeds, 'build-1.user-data'))
    assert.equal(again.json.result.hostKeyPublic, state.key)
    assert.deepEqual(readFileSync(join(seeds, 'build-1.user-data')), content, 'the seed the state took is in place')
    assert.deepEqual(await snapshot('build-1'), state, 'nothing new stored, no event')
    assert.deepEqual(readdirSync(seeds).sort(), [
      '.build-1.user-data.keep.tmp',
      '.build-2.user-data.0123456789ab.tmp',
      'build-1.user-data',
    ])
    rmSync(other)
    rmSync(foreign)
  })

  it('reissue: the old seed at the final path is replaced by the staged one the state holds; a plain re-run reports it', async () => {
    // build-1 enrolled, its seed out; then a reissue killed at its rename.
    await db.pool.query("UPDATE nodes SET status = 'active', enrollment_secret_used_at = now() WHERE id = 'build-1'")
    const old = readFileSync(join(seeds, 'build-1.user-data'))
    const staged = await seedKilledAtRename('build-1', ['--kind', 'agent', '--reissue', '--rekey', '--yes'], old)
    const content = readFileSync(staged)
    const state = await snapshot('build-1')

    const human = await runFleetkit(['seed', 'build-1', '--kind', 'agent', ...EXAMPLE], { env })
    assert.equal(human.code, 0, human.stderr)
    assert.match(
      human.stdout,
      /^Put into place the agent seed of build-1 that an interrupted run had stored and staged: /m,
    )
    assert.deepEqual(readFileSync(join(seeds, 'build-1.user-data')), content)
    assert.notDeepEqual(content, old)
    assert.deepEqual(await snapshot('build-1'), state)
    assert.deepEqual(readdirSync(seeds), ['build-1.user-data'])
  })

  it('a staged seed whose secret the state no longer holds is removed, and the refusal names --reissue --rekey, which works', async () => {
    // app-1's seed never landed (killed at the rename), then its secret was replaced by a token: the staged seed is dead.
    const staged = await seedKilledAtRename('app-1', ['--kind', 'agent', '--rekey'])
    const token = await runFleetkit(['node', 'token', 'app-1', '--reissue', ...EXAMPLE, '--json'], { env })
    assert.equal(token.code, 0, token.stderr)
    const state = await snapshot('app-1')

    const again = await runFleetkit(['seed', 'app-1', '--kind', 'agent', ...EXAMPLE, '--json'], { env })
    assert.equal(again.json.code, 'NODE_SECRET_PENDING', again.stdout)
    // The key the killed seed pinned stays pinned: a --reissue alone would be HOST_KEY_PINNED.
    const advice = again.json.actions[0].split('   ')[0] as string
    // The --definition given is repeated (src/cli/context-flags.ts).
    assert.equal(advice, 'fleetkit seed --definition examples/fleet.yaml app-1 --kind agent --rekey --reissue')
    assert.ok(!existsSync(staged), 'the dead staged seed (a host private key) is removed')
    assert.ok(!existsSync(join(seeds, 'app-1.user-data')))
    assert.deepEqual(await snapshot('app-1'), state)

    const reissueOnly = await runFleetkit(['seed', 'app-1', '--kind', 'agent', '--reissue', ...EXAMPLE, '--json'], {
      env,
    })
    assert.equal(reissueOnly.json.code, 'HOST_KEY_PINNED', reissueOnly.stdout)
    assert.equal(
      reissueOnly.json.actions[0].split('   ')[0],
      'fleetkit seed --definition examples/fleet.yaml app-1 --kind agent --reissue --rekey',
    )

    // Run as printed: the advice names the definition it was given.
    const advised = await runFleetkit([...advice.split(' ').slice(1), '--json'], { env })
    assert.equal(advised.code, 0, advised.stderr)
    assert.equal(advised.json.result.finishedInterrupted, false)
    assert.ok(existsSync(join(seeds, 'app-1.user-data')))
  })
})
