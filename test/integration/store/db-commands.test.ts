import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { initPki } from '../../../src/pki/init-pki.js'
import { loadMigrations } from '../../../src/store/migrate.js'
import { stopEmbeddedServer } from '../../../src/store/embedded/server.js'
import { assertMatchesOutputSchema, type CliRun, runFleetkit } from '../../support/cli.js'
import { type DisposablePostgres, runSql, startDisposablePostgres, withDatabase } from '../../support/postgres.js'
import { startRefusingPostgres } from '../../support/refusing-postgres.js'

interface Ran extends CliRun {
  exitCode: number
  json: Record<string, unknown> & { result?: Record<string, unknown> }
}

/** Run the real command with --json and validate what it printed against its schema. */
async function fleetkit(verb: 'status' | 'migrate' | 'stop', env: Record<string, string>): Promise<Ran> {
  const ran = await runFleetkit(['db', verb, '--json'], { env })
  assertMatchesOutputSchema(`db-${verb}`, ran.json)
  return { ...ran, exitCode: ran.code }
}

describe('fleetkit db status | migrate | stop', function () {
  this.timeout(180_000)
  let knownVersions: number[]
  before(async () => {
    knownVersions = (await loadMigrations()).map((m) => m.version)
  })

  describe('with the embedded server (FLEETKIT_STATE_DIR, no DATABASE_URL)', () => {
    let stateDir: string
    before(async () => {
      stateDir = await mkdtemp(join(tmpdir(), 'fleetkit-dbcmd-'))
    })
    after(async () => {
      await stopEmbeddedServer(stateDir).catch(() => undefined)
      await rm(stateDir, { recursive: true, force: true })
    })

    it('status before anything exists, migrate starts and migrates, status reports it, stop stops it', async () => {
      const env = { FLEETKIT_STATE_DIR: stateDir, DATABASE_URL: '' }
      const before = await fleetkit('status', env)
      assert.equal(before.exitCode, 0)
      assert.deepEqual(before.json.result?.schema, null)
      assert.equal((before.json.result?.server as { embedded: { initialised: boolean } }).embedded.initialised, false)

      const migrated = await fleetkit('migrate', env)
      assert.equal(migrated.exitCode, 0)
      assert.deepEqual(
        (migrated.json.result?.applied as { version: number }[]).map((m) => m.version),
        knownVersions,
      )

      const status = await fleetkit('status', env)
      const result = status.json.result as {
        server: { source: string; url: string; embedded: { running: boolean; pid: number } }
        schema: { version: number; pending: unknown[] }
        nodes: { total: number }
      }
      assert.equal(result.server.source, 'embedded')
      assert.equal(result.server.embedded.running, true)
      assert.match(result.server.url, /^postgres:\/\/fleetkit:\*\*\*@127\.0\.0\.1:\d+\/fleetkit$/)
      assert.equal(result.schema.version, knownVersions.at(-1))
      assert.deepEqual(result.schema.pending, [])
      assert.equal(result.nodes.total, 0)
      const password = (await readFile(join(stateDir, 'postgres', 'password'), 'utf8')).trim()
      for (const ran of [before, migrated, status])
        assert.ok(!ran.stdout.includes(password) && !ran.stderr.includes(password))

      const again = await fleetkit('migrate', env)
      assert.deepEqual(again.json.result?.applied, [])

      const stopped = await fleetkit('stop', env)
      assert.equal(stopped.json.result?.wasRunning, true)
      assert.equal(stopped.json.result?.pid, result.server.embedded.pid)
      const after = await fleetkit('status', env)
      assert.equal((after.json.result?.server as { embedded: { running: boolean } }).embedded.running, false)
    })
  })

  describe('with DATABASE_URL on a disposable server', () => {
    let server: DisposablePostgres
    let stateDir: string
    before(async () => {
      server = await startDisposablePostgres()
      stateDir = await mkdtemp(join(tmpdir(), 'fleetkit-dbcmd-url-'))
      await runSql(server.url, 'CREATE DATABASE cmd_test')
    })
    after(async () => {
      await server?.stop()
      await rm(stateDir, { recursive: true, force: true })
    })

    it('reports pending migrations, migrates, and never prints the password', async () => {
      const env = { FLEETKIT_STATE_DIR: stateDir, DATABASE_URL: withDatabase(server.url, 'cmd_test') }
      const before = await fleetkit('status', env)
      const schema = before.json.result?.schema as { version: number | null; pending: { version: number }[] }
      assert.equal(schema.version, null)
      assert.deepEqual(
        schema.pending.map((m) => m.version),
        knownVersions,
      )
      assert.equal(before.json.result?.nodes, null)
      const migrated = await fleetkit('migrate', env)
      assert.equal((migrated.json.result?.server as { source: string }).source, 'DATABASE_URL')
      const after = await fleetkit('status', env)
      assert.equal((after.json.result?.schema as { version: number }).version, knownVersions.at(-1))
      assert.match(
        (after.json.result?.server as { url: string }).url,
        /^postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/cmd_test$/,
      )
      for (const ran of [before, migrated, after])
        assert.ok(!ran.stdout.includes(server.password) && !ran.stderr.includes(server.password))
      // db stop leaves the DATABASE_URL server alone.
      const stopped = await fleetkit('stop', env)
      assert.equal(stopped.json.result?.wasRunning, false)
      assert.match(String(stopped.json.result?.databaseUrl), /:\*\*\*@/)
    })

    it('two db migrate processes at once on a fresh database both succeed and apply each migration once', async () => {
      await runSql(server.url, 'CREATE DATABASE cmd_race')
      const env = { FLEETKIT_STATE_DIR: stateDir, DATABASE_URL: withDatabase(server.url, 'cmd_race') }
      const [a, b] = await Promise.all([fleetkit('migrate', env), fleetkit('migrate', env)])
      assert.deepEqual([a.exitCode, b.exitCode], [0, 0])
      const applied = [
        ...(a.json.result?.applied as { version: number }[]),
        ...(b.json.result?.applied as { version: number }[]),
      ]
        .map((m) => m.version)
        .sort((x, y) => x - y)
      assert.deepEqual(applied, knownVersions)
    })

    it('refuses a database a newer fleetkit migrated: migrate fails with STATE_NEWER_THAN_CLI, status reports it', async () => {
      await runSql(
        withDatabase(server.url, 'cmd_test'),
        "INSERT INTO schema_migrations (version, name) VALUES (9999, 'from-the-future')",
      )
      const env = { FLEETKIT_STATE_DIR: stateDir, DATABASE_URL: withDatabase(server.url, 'cmd_test') }
      const migrated = await fleetkit('migrate', env)
      assert.equal(migrated.exitCode, 65)
      assert.equal(migrated.json.code, 'STATE_NEWER_THAN_CLI')
      const status = await fleetkit('status', env)
      assert.equal((status.json.result?.schema as { compatible: boolean }).compatible, false)
    })

    it('reading commands and gateway serve refuse an unmigrated shared database (STATE_SCHEMA_OLD, exit 75) and leave it untouched; db migrate then works', async () => {
      await runSql(server.url, 'CREATE DATABASE cmd_unmigrated')
      const url = withDatabase(server.url, 'cmd_unmigrated')
      const footprint = async () => {
        const tables = await runSql(
          url,
          "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'",
        )
        const migrations = await runSql(
          url,
          "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'schema_migrations'",
        )
        return { tables: tables.rows[0].n as number, schemaMigrations: migrations.rows[0].n as number }
      }
      assert.deepEqual(await footprint(), { tables: 0, schemaMigrations: 0 })
      const pkiDir = join(stateDir, 'pki-unmigrated')
      await initPki({ pkiDir, serverNames: ['127.0.0.1'], now: new Date() })
      const env = {
        FLEETKIT_STATE_DIR: stateDir,
        DATABASE_URL: url,
        FLEETKIT_PKI_DIR: pkiDir,
        FLEETKIT_ENROLL_BIND: '127.0.0.1:0',
        FLEETKIT_AGENT_BIND: '127.0.0.1:0',
        FLEETKIT_METRICS_BIND: '127.0.0.1:0',
      }
      const example = ['--definition', 'examples/fleet.yaml']
      const refused = await Promise.all([
        runFleetkit(['node', 'token', 'app-1', ...example, '--json'], { env }),
        runFleetkit(['validate', ...example, '--since', 'HEAD', '--json'], { env }),
        // The old behaviour migrated and then served: the timeout ends that, and the assertions fail.
        runFleetkit(['gateway', 'serve'], { env, timeout: 60_000 }),
      ])
      for (const [i, ran] of refused.entries()) {
        assert.equal(ran.code, 75, `run ${i}: ${ran.stdout}${ran.stderr}`)
        const text = ran.stdout + ran.stderr
        assert.match(text, /STATE_SCHEMA_OLD/)
        assert.match(text, /fleetkit db migrate/)
        assert.ok(!text.includes(server.password), 'the DATABASE_URL password leaked')
      }
      assert.equal(refused[0]!.json.code, 'STATE_SCHEMA_OLD')
      assert.equal(refused[0]!.json.actions[0], 'fleetkit db migrate')
      assert.deepEqual(await footprint(), { tables: 0, schemaMigrations: 0 }, 'a refused command changed the schema')

      const migrated = await fleetkit('migrate', { FLEETKIT_STATE_DIR: stateDir, DATABASE_URL: url })
      assert.equal(migrated.exitCode, 0)
      assert.deepEqual(
        (migrated.json.result?.applied as { version: number }[]).map((m) => m.version),
        knownVersions,
      )
      const token = await runFleetkit(['node', 'token', 'app-1', ...example, '--json'], { env })
      assert.notEqual(token.json.code, 'STATE_SCHEMA_OLD', token.stdout + token.stderr)
      assert.equal(token.code, 0, token.stdout + token.stderr)
    })

    it('gives STATE_UNREACHABLE (exit 69) with the password redacted when nothing listens', async () => {
      const env = { FLEETKIT_STATE_DIR: stateDir, DATABASE_URL: 'postgres://fleet:hunter2-secret@127.0.0.1:1/fleet' }
      const ran = await fleetkit('status', env)
      assert.equal(ran.exitCode, 69)
      assert.equal(ran.json.code, 'STATE_UNREACHABLE')
      assert.ok(!ran.stdout.includes('hunter2') && !ran.stderr.includes('hunter2'))
      assert.match(String(ran.json.message), /postgres:\/\/fleet:\*\*\*@127\.0\.0\.1:1\/fleet/)
    })

    it("gives STATE_DISK_FULL (exit 74), not STATE_UNREACHABLE, when the server's full disk fails every new session (53100 at connect)", async () => {
      const full = await startRefusingPostgres('53100', 'could not write init file: No space left on device')
      try {
        const env = { FLEETKIT_STATE_DIR: stateDir, DATABASE_URL: full.url }
        const status = await fleetkit('status', env)
        const list = await runFleetkit(['node', 'list', '--json'], { env })
        for (const ran of [{ ...status, code: status.exitCode }, list]) {
          assert.equal(ran.code, 74, ran.stdout + ran.stderr)
          assert.equal(ran.json.code, 'STATE_DISK_FULL')
          assert.match(String(ran.json.message), /its disk is full \(SQLSTATE 53100 disk_full\)/)
          const actions = ran.json.actions as string[]
          assert.ok(!actions.some((action) => /db stop/.test(action)), 'never advises stopping the server')
          assert.ok(!ran.stdout.includes('refused-secret') && !ran.stderr.includes('refused-secret'))
        }
        assert.ok(full.refused() >= 2, 'both commands reached the server')
      } finally {
        await full.close()
      }
    })

    it('gives STATE_AUTH_REFUSED (exit 77) for a wrong password', async () => {
      const wrong = new URL(withDatabase(server.url, 'cmd_test'))
      wrong.password = 'wrong-password-123'
      const ran = await fleetkit('migrate', { FLEETKIT_STATE_DIR: stateDir, DATABASE_URL: wrong.toString() })
      assert.equal(ran.exitCode, 77)
      assert.equal(ran.json.code, 'STATE_AUTH_REFUSED')
      assert.ok(!ran.stdout.includes('wrong-password-123'))
    })
  })
})
