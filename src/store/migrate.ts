// Forward-only schema migrations: numbered .sql files, each applied in its own transaction
// with its schema_migrations row inserted first, so concurrent migrators never run one twice.
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type pg from 'pg'

import { environmentFailure } from '../checks/environment-failures.js'
import { FleetkitError } from '../checks/fleetkit-error.js'
import { packagePath } from '../package-root.js'
import { type Queryable, withTransaction } from './transaction.js'
import { sqlState, SQLSTATE } from './pg-errors.js'

export interface Migration {
  version: number
  name: string
  sql: string
  sha256: string
}

interface AppliedMigration {
  version: number
  name: string
  appliedAt: Date
}

export interface SchemaStatus {
  /** The highest applied migration, or null for an empty database. */
  version: number | null
  /** The highest migration this CLI knows. */
  latestKnown: number
  applied: AppliedMigration[]
  pending: { version: number; name: string }[]
  /** Applied migrations this CLI does not know: a newer fleetkit migrated the database. */
  unknown: { version: number; name: string }[]
  /** Known migrations whose file changed after they were applied. */
  changed: { version: number; name: string }[]
  /** False when the highest applied migration is unknown to this CLI (STATE_NEWER_THAN_CLI). */
  compatible: boolean
}

export interface MigrateResult {
  applied: { version: number; name: string }[]
  status: SchemaStatus
}

const MIGRATION_FILE = /^(\d{4})-([a-z0-9][a-z0-9-]*)\.sql$/
/** One advisory lock key for every migrator of a database ("fleetkit" as ASCII digits); a restore takes it too. */
export const MIGRATION_LOCK_KEY = 7_020_865_311

const CREATE_SCHEMA_MIGRATIONS = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  sha256 text,
  applied_at timestamptz NOT NULL DEFAULT now()
)`

/**
 * The migrations directory: beside this module (src/ under tsx, or dist/ when the build
 * copies it), else the package's src/store/migrations.
 */
export function migrationsDir(): string {
  const beside = fileURLToPath(new URL('./migrations/', import.meta.url))
  if (existsSync(beside)) return beside
  return packagePath('src', 'store', 'migrations')
}

export async function loadMigrations(dir: string = migrationsDir()): Promise<Migration[]> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.sql')).sort()
  const migrations: Migration[] = []
  for (const file of names) {
    const match = MIGRATION_FILE.exec(file)
    if (!match) throw new Error(`migration file name ${file} is not NNNN-name.sql`)
    const sql = await readFile(join(dir, file), 'utf8')
    const version = Number(match[1])
    if (migrations.some((m) => m.version === version)) throw new Error(`two migrations have number ${match[1]}`)
    migrations.push({ version, name: match[2] ?? file, sql, sha256: createHash('sha256').update(sql).digest('hex') })
  }
  return migrations
}

export async function schemaStatus(q: Queryable, migrations?: Migration[]): Promise<SchemaStatus> {
  const known = migrations ?? (await loadMigrations())
  const rows = await readApplied(q)
  const knownByVersion = new Map(known.map((m) => [m.version, m]))
  const appliedVersions = new Set(rows.map((r) => r.version))
  const version = rows.length === 0 ? null : Math.max(...rows.map((r) => r.version))
  return {
    version,
    latestKnown: known.length === 0 ? 0 : Math.max(...known.map((m) => m.version)),
    applied: rows.map((r) => ({ version: r.version, name: r.name, appliedAt: r.appliedAt })),
    pending: known.filter((m) => !appliedVersions.has(m.version)).map(({ version: v, name }) => ({ version: v, name })),
    unknown: rows.filter((r) => !knownByVersion.has(r.version)).map(({ version: v, name }) => ({ version: v, name })),
    changed: rows
      .filter((r) => r.sha256 && knownByVersion.has(r.version) && knownByVersion.get(r.version)?.sha256 !== r.sha256)
      .map(({ version: v, name }) => ({ version: v, name })),
    compatible: version === null || knownByVersion.has(version),
  }
}

/** Throw STATE_NEWER_THAN_CLI when a newer fleetkit migrated this database. */
export async function assertSchemaCompatible(q: Queryable, migrations?: Migration[]): Promise<SchemaStatus> {
  const status = await schemaStatus(q, migrations)
  if (!status.compatible) throw newerThanCli(status)
  return status
}

/**
 * Throw unless the database is exactly at this CLI's schema: STATE_NEWER_THAN_CLI when a newer
 * fleetkit migrated it, STATE_SCHEMA_OLD when migrations are pending (an empty database too).
 * Reads only: a shared database's schema is changed by `fleetkit db migrate` and nothing else.
 */
export async function assertSchemaCurrent(
  q: Queryable,
  where: string,
  migrations?: Migration[],
): Promise<SchemaStatus> {
  const status = await assertSchemaCompatible(q, migrations)
  if (status.pending.length > 0) throw schemaOld(status, where)
  return status
}

export interface MigrateOptions {
  migrations?: Migration[]
  /** Told before each pending migration is applied, in one line for a person. */
  progress?: (message: string) => void
}

/**
 * Apply every pending migration in order. Safe when several processes migrate at once:
 * each migration's transaction takes an advisory lock and inserts its row first, and a
 * migrator whose insert finds the row already there skips that migration.
 */
export async function migrate(pool: pg.Pool, options: MigrateOptions = {}): Promise<MigrateResult> {
  const migrations = options.migrations ?? (await loadMigrations())
  const progress = options.progress ?? (() => undefined)
  const before = await schemaStatus(pool, migrations)
  if (!before.compatible) throw newerThanCli(before)
  if (before.pending.length === 0) return { applied: [], status: before }

  await inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY])
    await client.query(CREATE_SCHEMA_MIGRATIONS)
  })

  const applied: { version: number; name: string }[] = []
  const pending = new Set(before.pending.map((m) => m.version))
  for (const migration of migrations) {
    if (pending.has(migration.version))
      progress(`Applying schema migration ${pad(migration.version)}-${migration.name}`)
    const ran = await inTransaction(pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY])
      // Refuse a database another process moved past this CLI while we waited for the lock.
      const newest = await client.query<{ version: number }>('SELECT max(version) AS version FROM schema_migrations')
      const top = newest.rows[0]?.version
      if (top != null && !migrations.some((m) => m.version === top)) return 'newer' as const
      const inserted = await client.query(
        'INSERT INTO schema_migrations (version, name, sha256) VALUES ($1, $2, $3) ON CONFLICT (version) DO NOTHING',
        [migration.version, migration.name, migration.sha256],
      )
      if (inserted.rowCount === 0) return 'skipped' as const
      await runMigration(client, migration, 'fleetkit db migrate')
      return 'ran' as const
    })
    if (ran === 'newer') throw newerThanCli(await schemaStatus(pool, migrations))
    if (ran === 'ran') applied.push({ version: migration.version, name: migration.name })
  }
  return { applied, status: await schemaStatus(pool, migrations) }
}

/**
 * Apply the migrations numbered above `after` and up to `upTo` on `client`, inside the caller's
 * transaction (a restore builds a backup's schema this way: all of it commits or none). The
 * caller holds MIGRATION_LOCK_KEY. A failing migration is STATE_MIGRATION_FAILED.
 */
export async function applyMigrationsWithin(
  client: Queryable,
  migrations: Migration[],
  range: { after: number; upTo: number },
): Promise<{ version: number; name: string }[]> {
  await client.query(CREATE_SCHEMA_MIGRATIONS)
  const applied: { version: number; name: string }[] = []
  for (const migration of migrations) {
    if (migration.version <= range.after || migration.version > range.upTo) continue
    await client.query('INSERT INTO schema_migrations (version, name, sha256) VALUES ($1, $2, $3)', [
      migration.version,
      migration.name,
      migration.sha256,
    ])
    await runMigration(client, migration, 'run the command again')
    applied.push({ version: migration.version, name: migration.name })
  }
  return applied
}

/**
 * One migration's SQL on `client` (in the caller's transaction); a failure is STATE_MIGRATION_FAILED,
 * unless the server failed it for a reason of its own (its disk is full, the connection broke): then
 * the environment's code (STATE_DISK_FULL: free space and run it again; nothing about the migration
 * needs a person), as a statement of any command would get.
 */
async function runMigration(client: Queryable, migration: Migration, retry: string): Promise<void> {
  try {
    await client.query(migration.sql)
  } catch (error) {
    const environment = error instanceof Error ? environmentFailure(error) : undefined
    if (environment)
      throw new FleetkitError(
        environment.code,
        `migration ${pad(migration.version)}-${migration.name} was rolled back: ${environment.message}`,
        {
          actions: environment.actions,
          data: { version: migration.version, name: migration.name, ...environment.data },
          cause: error,
        },
      )
    throw new FleetkitError(
      'STATE_MIGRATION_FAILED',
      `migration ${pad(migration.version)}-${migration.name} failed (${sqlState(error) ?? 'no SQLSTATE'}); it was rolled back`,
      {
        actions: ['fleetkit db status', `fix the cause in the database, then: ${retry}`],
        data: { version: migration.version, name: migration.name, sqlstate: sqlState(error) ?? null },
        cause: error,
      },
    )
  }
}

async function readApplied(
  q: Queryable,
): Promise<{ version: number; name: string; sha256: string | null; appliedAt: Date }[]> {
  // Looked up first, not caught: inside a transaction (a backup's snapshot, a restore) a failed
  // statement would abort the whole transaction.
  const present = await q.query<{ present: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS present")
  if (!present.rows[0]?.present) return []
  try {
    const result = await q.query<{ version: number; name: string; sha256: string | null; applied_at: Date }>(
      'SELECT version, name, sha256, applied_at FROM schema_migrations ORDER BY version',
    )
    return result.rows.map((r) => ({ version: r.version, name: r.name, sha256: r.sha256, appliedAt: r.applied_at }))
  } catch (error) {
    // A database no fleetkit has touched yet.
    if (sqlState(error) === SQLSTATE.undefinedTable) return []
    throw error
  }
}

function newerThanCli(status: SchemaStatus): FleetkitError {
  return new FleetkitError(
    'STATE_NEWER_THAN_CLI',
    `the database is at schema version ${status.version}, newer than this fleetkit knows (${status.latestKnown}); refusing to use it`,
    {
      actions: ['upgrade fleetkit to the version that migrated this database', 'fleetkit db status'],
      data: { version: status.version, latestKnown: status.latestKnown, unknown: status.unknown },
    },
  )
}

function schemaOld(status: SchemaStatus, where: string): FleetkitError {
  const has = status.version === null ? 'has no fleetkit schema yet' : `is at schema version ${status.version}`
  return new FleetkitError(
    'STATE_SCHEMA_OLD',
    `the database ${where} ${has}, older than this fleetkit's ${status.latestKnown} (${status.pending.length} pending migration${status.pending.length === 1 ? '' : 's'}); only fleetkit db migrate changes its schema`,
    {
      actions: ['fleetkit db migrate', 'fleetkit db status'],
      data: { version: status.version, latestKnown: status.latestKnown, pending: status.pending },
    },
  )
}

function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withTransaction(pool, fn)
}

function pad(version: number): string {
  return String(version).padStart(4, '0')
}
