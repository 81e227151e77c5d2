// A seed, an operator key or a backup written inside a Git work tree that does not ignore it is
// refused (SECRET_OUTPUT_IN_GIT) before anything is written or stored; an ignored path,
// --force and a path outside any work tree are written. Real git, real PostgreSQL, real CLI.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
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

describe('secrets stay out of Git: seed --output, ca init and operator-cert, db backup (real git and PostgreSQL)', function () {
  this.timeout(180_000)
  let server: DisposablePostgres
  let db: FreshDatabase
  let dir: string
  let repo: string
  let env: Record<string, string>

  async function stateOf(node: string): Promise<{ rows: number; events: number }> {
    const nodes = await db.pool.query('SELECT 1 FROM nodes WHERE id = $1', [node])
    const events = await db.pool.query('SELECT 1 FROM events WHERE node_id = $1', [node])
    return { rows: nodes.rowCount ?? 0, events: events.rowCount ?? 0 }
  }

  /** Every file under the work tree but .git: what a refused run must not have added to. */
  function workTreeFiles(): string[] {
    return readdirSync(repo, { recursive: true, withFileTypes: true })
      .filter((f) => f.isFile() && !join(f.parentPath, f.name).includes(`${repo}/.git/`))
      .map((f) => join(f.parentPath, f.name))
      .sort()
  }

  function seed(node: string, output: string, ...extra: string[]) {
    return runFleetkit(
      ['seed', node, '--kind', 'agent', '--rekey', ...EXAMPLE, '--output', output, ...extra, '--json'],
      {
        env,
      },
    )
  }

  before(async () => {
    server = await startDisposablePostgres()
    db = await freshDatabase(server.url)
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'fleetkit-output-in-git-')))
    mkdirSync(join(dir, 'pki'), { mode: 0o700 })
    copyFileSync(
      packagePath('test', 'fixtures', 'cloud-init', 'gateway-ca-bundle.pem'),
      join(dir, 'pki', 'ca-bundle.pem'),
    )
    repo = join(dir, 'fleet')
    mkdirSync(join(repo, 'ignored'), { recursive: true })
    execFileSync('git', ['init', '-q', repo])
    writeFileSync(join(repo, '.gitignore'), '/ignored/\n')
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

  it('seed --output into the work tree, not ignored: SECRET_OUTPUT_IN_GIT (exit 2), nothing written, the state unchanged', async () => {
    const before = workTreeFiles()
    const output = join(repo, 'build-1.user-data')
    const ran = await seed('build-1', output)
    assert.equal(ran.code, 2, ran.stdout)
    assertMatchesOutputSchema('error', ran.json)
    assert.equal(ran.json.code, 'SECRET_OUTPUT_IN_GIT')
    assert.deepEqual(ran.json.data, { path: output, workTree: repo })
    assert.match(ran.json.message, /--force/)
    assert.ok(
      ran.json.actions.some((a: string) => a.includes(`--output ${output} --force`)),
      ran.json.actions,
    )
    assert.deepEqual(workTreeFiles(), before, 'no seed and no staged file in the work tree')
    assert.deepEqual(await stateOf('build-1'), { rows: 0, events: 0 })

    const human = await runFleetkit(['seed', 'build-1', '--kind', 'agent', '--rekey', ...EXAMPLE, '--output', output], {
      env,
    })
    assert.equal(human.code, 2)
    assert.match(human.stderr, /SECRET_OUTPUT_IN_GIT/)
    assert.ok(!existsSync(output))
  })

  it('an ignored path, --force and a path outside any work tree are written', async () => {
    const ignored = await seed('build-1', join(repo, 'ignored', 'build-1.user-data'))
    assert.equal(ignored.code, 0, ignored.stdout)
    assertMatchesOutputSchema('seed', ignored.json)
    assert.ok(existsSync(join(repo, 'ignored', 'build-1.user-data')))

    const forced = await seed('build-2', join(repo, 'build-2.user-data'), '--force')
    assert.equal(forced.code, 0, forced.stdout)
    assert.ok(existsSync(join(repo, 'build-2.user-data')))
    assert.equal((await stateOf('build-2')).rows, 1)

    const outside = await seed('db-1', join(dir, 'db-1.user-data'))
    assert.equal(outside.code, 0, outside.stdout)
    assert.ok(existsSync(join(dir, 'db-1.user-data')))
  })

  it('seed --output - (stdout) is not a file: allowed from inside a work tree', async () => {
    const definition = ['--definition', packagePath('examples', 'fleet.yaml')]
    const ran = await runFleetkit(['seed', 'app-1', '--kind', 'agent', '--rekey', ...definition, '--output', '-'], {
      env,
      cwd: repo,
    })
    assert.equal(ran.code, 0, ran.stderr)
    assert.match(ran.stdout, /^#cloud-config/)
  })

  it('ca operator-cert --out into the work tree: refused before anything is issued; --force writes it', async () => {
    const pkiDir = join(dir, 'ca')
    const ca = await runFleetkit(['ca', 'init', '--pki-dir', pkiDir, '--json'], { env })
    assert.equal(ca.code, 0, ca.stdout)
    const out = join(repo, 'operators')
    const refused = await runFleetkit(['ca', 'operator-cert', 'alice', '--out', out, '--pki-dir', pkiDir, '--json'], {
      env,
    })
    assert.equal(refused.code, 2, refused.stdout)
    assert.equal(refused.json.code, 'SECRET_OUTPUT_IN_GIT')
    assert.equal(refused.json.data.path, join(out, 'alice.key'))
    assert.ok(!existsSync(out))
    assert.equal((await db.pool.query("SELECT 1 FROM operator_certificates WHERE name = 'alice'")).rowCount, 0)

    const forced = await runFleetkit(
      ['ca', 'operator-cert', 'alice', '--out', out, '--pki-dir', pkiDir, '--force', '--json'],
      { env },
    )
    assert.equal(forced.code, 0, forced.stdout)
    assertMatchesOutputSchema('ca-operator-cert', forced.json)
    assert.ok(existsSync(join(out, 'alice.key')))
  })

  it('db backup into the current directory inside the work tree (its default): refused; --force writes it', async () => {
    const before = workTreeFiles()
    const refused = await runFleetkit(['db', 'backup', '--json'], { env, cwd: repo })
    assert.equal(refused.code, 2, refused.stdout)
    assert.equal(refused.json.code, 'SECRET_OUTPUT_IN_GIT')
    assert.match(refused.json.data.path, /\/fleet\/fleetkit-backup-[^/]+\.tar\.gz$/)
    assert.deepEqual(workTreeFiles(), before, 'no backup and no temp file in the work tree')

    const forced = await runFleetkit(['db', 'backup', '--force', '--json'], { env, cwd: repo })
    assert.equal(forced.code, 0, forced.stdout)
    assertMatchesOutputSchema('db-backup', forced.json)
    assert.ok(existsSync(forced.json.result.file))
  })

  it('ca init --pki-dir into the work tree: refused with no directory made; an ignored one and --force are written', async () => {
    const before = workTreeFiles()
    const pkiDir = join(repo, 'pki')
    const refused = await runFleetkit(['ca', 'init', '--pki-dir', pkiDir, '--json'], { env })
    assert.equal(refused.code, 2, refused.stdout)
    assert.equal(refused.json.code, 'SECRET_OUTPUT_IN_GIT')
    assert.equal(refused.json.data.path, join(pkiDir, 'ca.key'))
    assert.match(refused.json.actions.join('\n'), /fleetkit ca init --pki-dir .* --force/)
    assert.ok(!existsSync(pkiDir), 'not even the directory')
    assert.deepEqual(workTreeFiles(), before)

    const ignored = await runFleetkit(['ca', 'init', '--pki-dir', join(repo, 'ignored', 'pki'), '--json'], { env })
    assert.equal(ignored.code, 0, ignored.stdout)
    const forced = await runFleetkit(['ca', 'init', '--pki-dir', pkiDir, '--force', '--json'], { env })
    assert.equal(forced.code, 0, forced.stdout)
    assertMatchesOutputSchema('ca-init', forced.json)
    assert.ok(existsSync(join(pkiDir, 'ca.key')))
  })
})
