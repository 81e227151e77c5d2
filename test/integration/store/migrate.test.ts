import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'

import pg from 'pg'

import type { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { openDatabase } from '../../../src/store/database.js'
import {
  assertSchemaCompatible,
  loadMigrations,
  migrate,
  type Migration,
  schemaStatus,
} from '../../../src/store/migrate.js'
import { eventually } from '../../support/eventually.js'
import { type DisposablePostgres, runSql, startDisposablePostgres, withDatabase } from '../../support/postgres.js'

/** An empty database on the disposable server (not cloned from the migrated template). */
async function emptyDatabase(
  server: DisposablePostgres,
  name: string,
): Promise<{ url: string; pool: pg.Pool; drop(): Promise<void> }> {
  await runSql(server.url, `CREATE DATABASE ${name}`)
  const url = withDatabase(server.url, name)
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  pool.on('error', () => undefined)
  return {
    url,
    pool,
    drop: async () => {
      await pool.end()
      // pg's Pool.end() resolves once its clients are told to end, not once their sessions are gone: a
      // forced drop could end a session still closing, whose client then has no 'error' listener left.
      await eventually(
        `the sessions of ${name} closed`,
        async () =>
          Number(
            (await runSql(server.url, 'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1', [name])).rows[0]
              .n,
          ) === 0,
        { timeoutMs: 10_000 },
      )
      await runSql(server.url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    },
  }
}

/** By code, not instanceof: under tsx a dynamically imported module may be a second instance. */
function hasCode(error: unknown, code: string): boolean {
  return error instanceof Error && (error as FleetkitError).code === code
}

function migration(version: number, name: string, sql: string): Migration {
  return { version, name, sql, sha256: createHash('sha256').update(sql).digest('hex') }
}

describe('migrate (real PostgreSQL)', function () {
  this.timeout(120_000)
  let server: DisposablePostgres
  before(async () => {
    server = await startDisposablePostgres()
  })
  after(async () => {
    await server?.stop()
  })

  it('applies every migration to an empty database, records the version, and is a no-op the second time', async () => {
    const db = await emptyDatabase(server, 'mig_fresh')
    try {
      const known = await loadMigrations()
      const first = await migrate(db.pool)
      assert.deepEqual(
        first.applied.map((m) => m.version),
        known.map((m) => m.version),
      )
      assert.equal(first.status.version, known.at(-1)?.version)
      assert.deepEqual(first.status.pending, [])
      assert.equal(first.status.compatible, true)
      const again = await migrate(db.pool)
      assert.deepEqual(again.applied, [])
      const tables = await db.pool.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
      const names = tables.rows.map((r: { tablename: string }) => r.tablename)
      for (const t of ['schema_migrations', 'nodes', 'events', 'allocations', 'sync_runs'])
        assert.ok(names.includes(t), `table ${t}`)
    } finally {
      await db.drop()
    }
  })

  it('two concurrent migrators on one fresh database both succeed and each migration runs once', async () => {
    const db = await emptyDatabase(server, 'mig_race')
    const poolB = new pg.Pool({ connectionString: db.url, max: 5 })
    try {
      // Each test migration records that it ran; a second run would add a second row.
      const migrations = [
        migration(
          1,
          'counter',
          'CREATE TABLE ran (version integer NOT NULL, at timestamptz DEFAULT clock_timestamp()); INSERT INTO ran VALUES (1)',
        ),
        migration(2, 'slow', 'SELECT pg_sleep(0.2); INSERT INTO ran VALUES (2)'),
        migration(3, 'third', 'INSERT INTO ran VALUES (3)'),
      ]
      const [a, b] = await Promise.all([migrate(db.pool, { migrations }), migrate(poolB, { migrations })])
      const ran = await db.pool.query<{ version: number; n: string }>(
        'SELECT version, count(*) AS n FROM ran GROUP BY version ORDER BY version',
      )
      assert.deepEqual(
        ran.rows.map((r) => [r.version, Number(r.n)]),
        [
          [1, 1],
          [2, 1],
          [3, 1],
        ],
      )
      // Between them they applied each migration exactly once.
      const applied = [...a.applied, ...b.applied].map((m) => m.version).sort()
      assert.deepEqual(applied, [1, 2, 3])
      assert.equal(a.status.version, 3)
      assert.equal(b.status.version, 3)
    } finally {
      await poolB.end()
      await db.drop()
    }
  })

  it('five processes-worth of pools migrating the real schema at once all succeed', async () => {
    const db = await emptyDatabase(server, 'mig_race_real')
    const pools = Array.from({ length: 5 }, () => new pg.Pool({ connectionString: db.url, max: 2 }))
    try {
      const results = await Promise.all(pools.map((p) => migrate(p)))
      const known = await loadMigrations()
      assert.equal(results.flatMap((r) => r.applied).length, known.length)
      const rows = await db.pool.query('SELECT version FROM schema_migrations ORDER BY version')
      assert.deepEqual(
        rows.rows.map((r: { version: number }) => r.version),
        known.map((m) => m.version),
      )
    } finally {
      await Promise.all(pools.map((p) => p.end()))
      await db.drop()
    }
  })

  it('a failing migration rolls back whole, leaves no row, and reports STATE_MIGRATION_FAILED with its SQLSTATE', async () => {
    const db = await emptyDatabase(server, 'mig_fail')
    try {
      const migrations = [
        migration(1, 'good', 'CREATE TABLE good (id integer)'),
        migration(2, 'bad', 'CREATE TABLE half (id integer); SELECT * FROM no_such_table'),
      ]
      await assert.rejects(migrate(db.pool, { migrations }), (error: unknown) => {
        assert.ok(hasCode(error, 'STATE_MIGRATION_FAILED'))
        assert.equal((error as FleetkitError).data?.version, 2)
        assert.equal((error as FleetkitError).data?.sqlstate, '42P01')
        return true
      })
      const status = await schemaStatus(db.pool, migrations)
      assert.equal(status.version, 1)
      assert.deepEqual(status.pending, [{ version: 2, name: 'bad' }])
      const half = await db.pool.query("SELECT to_regclass('public.half') AS t")
      assert.equal(half.rows[0].t, null)
    } finally {
      await db.drop()
    }
  })

  it('a migration the full disk fails is STATE_DISK_FULL (free space, run it again), rolled back whole, not STATE_MIGRATION_FAILED', async () => {
    const db = await emptyDatabase(server, 'mig_disk_full')
    try {
      // PostgreSQL's own disk_full (53100), as a statement that must grow a file on a full disk raises it.
      const full = migration(
        2,
        'grows',
        "CREATE TABLE half (id integer); DO $$ BEGIN RAISE EXCEPTION 'could not extend file' USING ERRCODE = 'disk_full'; END $$",
      )
      const migrations = [migration(1, 'good', 'CREATE TABLE good (id integer)'), full]
      await assert.rejects(migrate(db.pool, { migrations }), (error: unknown) => {
        assert.ok(hasCode(error, 'STATE_DISK_FULL'), String(error))
        const e = error as FleetkitError
        assert.equal(e.exitCode, 74)
        assert.match(e.message, /^migration 0002-grows was rolled back: PostgreSQL could not write: its disk is full/)
        assert.deepEqual(e.data, { version: 2, name: 'grows', sqlstate: '53100' })
        assert.ok(e.actions[0]?.startsWith('free space on the filesystem of the PostgreSQL data directory'))
        return true
      })
      const status = await schemaStatus(db.pool, migrations)
      assert.equal(status.version, 1)
      const half = await db.pool.query("SELECT to_regclass('public.half') AS t")
      assert.equal(half.rows[0].t, null, 'rolled back whole')
      // Space freed: the same run applies it.
      const freed = [migrations[0]!, migration(2, 'grows', 'CREATE TABLE half (id integer)')]
      await migrate(db.pool, { migrations: freed })
      assert.equal((await schemaStatus(db.pool, freed)).version, 2)
    } finally {
      await db.drop()
    }
  })

  it('refuses a database a newer fleetkit migrated (STATE_NEWER_THAN_CLI) before applying anything', async () => {
    const db = await emptyDatabase(server, 'mig_newer')
    try {
      await migrate(db.pool)
      await db.pool.query("INSERT INTO schema_migrations (version, name) VALUES (9999, 'from-the-future')")
      await assert.rejects(migrate(db.pool), (error: unknown) => hasCode(error, 'STATE_NEWER_THAN_CLI'))
      await assert.rejects(assertSchemaCompatible(db.pool), (error: unknown) => hasCode(error, 'STATE_NEWER_THAN_CLI'))
      const status = await schemaStatus(db.pool)
      assert.equal(status.compatible, false)
      assert.deepEqual(status.unknown, [{ version: 9999, name: 'from-the-future' }])
      // openDatabase refuses it before any use, in both schema modes.
      await assert.rejects(openDatabase({ databaseUrl: db.url }), (error: unknown) =>
        hasCode(error, 'STATE_NEWER_THAN_CLI'),
      )
      await assert.rejects(openDatabase({ databaseUrl: db.url, schema: 'current' }), (error: unknown) =>
        hasCode(error, 'STATE_NEWER_THAN_CLI'),
      )
    } finally {
      await db.drop()
    }
  })

  it('reports a migration whose file changed after it was applied', async () => {
    const db = await emptyDatabase(server, 'mig_changed')
    try {
      await migrate(db.pool, { migrations: [migration(1, 'a', 'CREATE TABLE a (id integer)')] })
      const status = await schemaStatus(db.pool, [migration(1, 'a', 'CREATE TABLE a (id bigint)')])
      assert.deepEqual(status.changed, [{ version: 1, name: 'a' }])
    } finally {
      await db.drop()
    }
  })

  /** Tables in the public schema and applied migrations: what "the schema is untouched" means. */
  async function schemaFootprint(pool: pg.Pool): Promise<{ tables: string[]; migrations: number[] }> {
    const tables = await pool.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    )
    const names = tables.rows.map((r) => r.name)
    const migrations = names.includes('schema_migrations')
      ? (await pool.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY 1')).rows.map(
          (r) => r.version,
        )
      : []
    return { tables: names, migrations }
  }

  it('openDatabase on DATABASE_URL refuses an empty database with STATE_SCHEMA_OLD and creates nothing', async () => {
    const db = await emptyDatabase(server, 'mig_open')
    try {
      await assert.rejects(openDatabase({ databaseUrl: db.url }), (error: unknown) => {
        assert.ok(hasCode(error, 'STATE_SCHEMA_OLD'), String(error))
        const e = error as FleetkitError
        assert.equal(e.exitCode, 75)
        assert.equal(e.actions[0], 'fleetkit db migrate')
        assert.match(
          e.message,
          /^the database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/mig_open has no fleetkit schema yet, older than this fleetkit's \d+ \(\d+ pending migrations\); only fleetkit db migrate changes its schema$/,
        )
        assert.ok(!e.message.includes(server.password) && !JSON.stringify(e.data).includes(server.password))
        return true
      })
      assert.deepEqual(await schemaFootprint(db.pool), { tables: [], migrations: [] })
      // Asked for explicitly, it migrates (what fleetkit db migrate does), and the password stays redacted.
      const opened = await openDatabase({ databaseUrl: db.url, schema: 'migrate' })
      try {
        assert.equal(opened.source, 'DATABASE_URL')
        assert.match(opened.url, /^postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/mig_open$/)
        assert.ok(!JSON.stringify(opened).includes(server.password))
        assert.deepEqual((await schemaStatus(opened.pool)).pending, [])
      } finally {
        await opened.close()
      }
      // At the current schema, the default opens it.
      const again = await openDatabase({ databaseUrl: db.url })
      await again.close()
    } finally {
      await db.drop()
    }
  })

  it('openDatabase on DATABASE_URL refuses a database with pending migrations, in auto and current modes, without applying them', async () => {
    const db = await emptyDatabase(server, 'mig_behind')
    try {
      const known = await loadMigrations()
      await migrate(db.pool, { migrations: known.slice(0, 1) })
      const before = await schemaFootprint(db.pool)
      assert.deepEqual(before.migrations, [known[0]!.version])
      for (const schema of [undefined, 'current'] as const) {
        await assert.rejects(openDatabase({ databaseUrl: db.url, ...(schema ? { schema } : {}) }), (error: unknown) => {
          assert.ok(hasCode(error, 'STATE_SCHEMA_OLD'), String(error))
          assert.match(
            (error as Error).message,
            new RegExp(
              `is at schema version ${known[0]!.version}, older than this fleetkit's ${known.at(-1)!.version} \\(${known.length - 1} pending migrations?\\)`,
            ),
          )
          assert.deepEqual(
            (error as FleetkitError).data?.pending,
            known.slice(1).map((m) => ({ version: m.version, name: m.name })),
          )
          return true
        })
      }
      assert.deepEqual(await schemaFootprint(db.pool), before)
      // schema: 'none' (db status) still connects to read it.
      const status = await openDatabase({ databaseUrl: db.url, schema: 'none' })
      await status.close()
    } finally {
      await db.drop()
    }
  })

  it('migrate() reports each pending migration to progress before applying it, and nothing when none is pending', async () => {
    const db = await emptyDatabase(server, 'mig_progress')
    try {
      const known = await loadMigrations()
      const messages: string[] = []
      await migrate(db.pool, { progress: (m) => messages.push(m) })
      assert.deepEqual(
        messages,
        known.map((m) => `Applying schema migration ${String(m.version).padStart(4, '0')}-${m.name}`),
      )
      const later: string[] = []
      await migrate(db.pool, { progress: (m) => later.push(m) })
      assert.deepEqual(later, [])
    } finally {
      await db.drop()
    }
  })

  it('openDatabase gives STATE_AUTH_REFUSED for a wrong password and STATE_UNREACHABLE for a missing database', async () => {
    const wrong = new URL(server.url)
    wrong.password = 'not-the-password'
    await assert.rejects(openDatabase({ databaseUrl: wrong.toString() }), (error: unknown) => {
      assert.ok(hasCode(error, 'STATE_AUTH_REFUSED'))
      assert.ok(!(error as Error).message.includes('not-the-password'))
      return true
    })
    await assert.rejects(openDatabase({ databaseUrl: withDatabase(server.url, 'no_such_db') }), (error: unknown) => {
      assert.ok(hasCode(error, 'STATE_UNREACHABLE'))
      assert.ok(!(error as Error).message.includes(server.password))
      return true
    })
  })
})
