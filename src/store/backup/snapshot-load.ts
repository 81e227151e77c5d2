// Replacing fleetkit's database with a logical snapshot, in one transaction: the schema is removed,
// rebuilt by the migrations up to the snapshot's version, loaded, then migrated to this fleetkit's.
// Nothing is visible to anyone until it all commits; any failure rolls all of it back.
import type pg from 'pg'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import {
  applyMigrationsWithin,
  assertSchemaCompatible,
  loadMigrations,
  type Migration,
  MIGRATION_LOCK_KEY,
} from '../migrate.js'
import { sqlState } from '../pg-errors.js'
import {
  currentSchema,
  dropSchemaObjects,
  listSequences,
  listTables,
  qualified,
  quoteIdent,
  type TableColumn,
} from './schema-objects.js'
import type { SnapshotSequence } from './snapshot-export.js'
import { withWaitedSessionLock } from '../advisory-lock.js'
import { withTransaction } from '../transaction.js'

export interface TableToLoad {
  name: string
  columns: TableColumn[]
  rows: number
  /** The table's rows as JSON lines, in batches; read once. */
  batches(): AsyncIterable<string[]>
}

export interface SnapshotToLoad {
  /** The snapshot's schema version (0: taken before any migration). */
  schemaVersion: number
  /** In the order they load (foreign-key order, as exported). */
  tables: TableToLoad[]
  sequences: SnapshotSequence[]
}

export interface LoadResult {
  /** The migrations applied after the load, from the snapshot's version to this fleetkit's. */
  migrated: { version: number; name: string }[]
  schemaVersion: number
  tables: { name: string; rows: number }[]
}

/** SQLSTATE 55P03: a lock was not granted within lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03'

/** The session lock of `fleetkit db restore` on a database: one restore at a time ("fleetkit" as ASCII digits, 3rd). */
const RESTORE_LOCK_KEY = 7_020_865_313

/**
 * Runs a whole restore (its checks, the replacement and what follows it, the PKI rename) holding the
 * database's restore lock, so that of two restores into one database the second judges the target after
 * the first is done. Waits `waitMs` (30 s) for another restore: then RESTORE_TARGET_BUSY, nothing changed.
 */
export async function withRestoreLock<T>(pool: pg.Pool, fn: () => Promise<T>, waitMs = 30_000): Promise<T> {
  let locked = false
  try {
    return await withWaitedSessionLock(pool, RESTORE_LOCK_KEY, waitMs, () => {
      locked = true
      return fn()
    })
  } catch (error) {
    if (!locked && sqlState(error) === LOCK_NOT_AVAILABLE) {
      throw new FleetkitError(
        'RESTORE_TARGET_BUSY',
        `another fleetkit db restore into this database ran for the ${Math.round(waitMs / 1000)} s this one waits; this one changed nothing`,
        {
          actions: ['wait for it to finish, then run this restore again (with --force to replace what it restored)'],
          data: { sqlstate: LOCK_NOT_AVAILABLE },
          cause: error,
        },
      )
    }
    throw error
  }
}

/**
 * The whole replacement. `lockTimeoutMs` (30 s) bounds the wait for a table another session (a
 * running gateway) holds: then RESTORE_TARGET_BUSY, with nothing changed.
 */
export async function replaceWithSnapshot(
  pool: pg.Pool,
  snapshot: SnapshotToLoad,
  options: {
    migrations?: Migration[]
    lockTimeoutMs?: number
    /**
     * Judges the target inside the transaction, its tables locked (as the drop locks them), before
     * anything is dropped: what it sees stays so until the commit. It throws to refuse.
     */
    check?: (client: pg.PoolClient, schema: string) => Promise<void>
    /** Runs last in the transaction, on the loaded and migrated schema (the restore's event). */
    record?: (client: pg.PoolClient, loaded: LoadResult) => Promise<void>
  } = {},
): Promise<LoadResult> {
  const migrations = options.migrations ?? (await loadMigrations())
  const latest = migrations.reduce((top, m) => Math.max(top, m.version), 0)
  try {
    return await withTransaction(pool, async (client) => {
      await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(options.lockTimeoutMs ?? 30_000))}`)
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY])
      await assertSchemaCompatible(client, migrations)
      const schema = await currentSchema(client)
      if (options.check) {
        await lockTables(client, schema)
        await options.check(client, schema)
      }
      await dropSchemaObjects(client, schema)
      await applyMigrationsWithin(client, migrations, { after: 0, upTo: snapshot.schemaVersion })
      await assertSameShape(client, schema, snapshot)
      // The snapshot's own schema_migrations rows (with their dates) replace those just written.
      await client.query('DELETE FROM schema_migrations')
      const loaded: LoadResult['tables'] = []
      for (const table of snapshot.tables) loaded.push(await loadTable(client, schema, table, snapshot.schemaVersion))
      for (const s of snapshot.sequences)
        await client.query('SELECT setval($1::regclass, $2::bigint, $3)', [
          qualified(schema, s.name),
          s.lastValue,
          s.isCalled,
        ])
      const migrated = await applyMigrationsWithin(client, migrations, { after: snapshot.schemaVersion, upTo: latest })
      const result = { migrated, schemaVersion: Math.max(latest, snapshot.schemaVersion), tables: loaded }
      await options.record?.(client, result)
      return result
    })
  } catch (error) {
    if (sqlState(error) === LOCK_NOT_AVAILABLE) {
      throw new FleetkitError(
        'RESTORE_TARGET_BUSY',
        'another session holds fleetkit tables (a running gateway or command); the restore waited and changed nothing',
        {
          actions: ['stop every fleetkit gateway that uses this database, then run the restore again'],
          data: { sqlstate: LOCK_NOT_AVAILABLE },
          cause: error,
        },
      )
    }
    throw error
  }
}

/** Every table of the schema, ACCESS EXCLUSIVE: no row arrives or leaves until the transaction ends. */
async function lockTables(client: pg.PoolClient, schema: string): Promise<void> {
  const tables = await listTables(client, schema)
  if (tables.length === 0) return
  await client.query(`LOCK TABLE ${tables.map((t) => qualified(schema, t.name)).join(', ')} IN ACCESS EXCLUSIVE MODE`)
}

/** The tables the migrations made at the snapshot's version are exactly the snapshot's, column for column. */
async function assertSameShape(client: pg.PoolClient, schema: string, snapshot: SnapshotToLoad): Promise<void> {
  const built = new Map((await listTables(client, schema)).map((t) => [t.name, t]))
  const problems: string[] = []
  for (const table of snapshot.tables) {
    const have = built.get(table.name)
    if (!have) problems.push(`table ${table.name} does not exist at schema version ${snapshot.schemaVersion}`)
    else if (JSON.stringify(have.columns) !== JSON.stringify(table.columns))
      problems.push(`table ${table.name} has other columns at schema version ${snapshot.schemaVersion}`)
  }
  const inSnapshot = new Set(snapshot.tables.map((t) => t.name))
  for (const name of built.keys()) if (!inSnapshot.has(name)) problems.push(`the backup lacks table ${name}`)
  const sequences = new Set(await listSequences(client, schema))
  for (const s of snapshot.sequences)
    if (!sequences.has(s.name))
      problems.push(`sequence ${s.name} does not exist at schema version ${snapshot.schemaVersion}`)
  if (problems.length > 0) {
    throw new FleetkitError(
      'BACKUP_INVALID',
      `the backup does not match fleetkit's schema version ${snapshot.schemaVersion}: ${problems.slice(0, 3).join('; ')}`,
      {
        actions: ['restore a backup written by fleetkit db backup, unchanged'],
        data: { schemaVersion: snapshot.schemaVersion, problems },
      },
    )
  }
}

/**
 * Rows go to a temporary staging table first, then into the table in one INSERT: a table whose
 * foreign key references itself (a node replacing another) loads whatever the row order.
 */
async function loadTable(
  client: pg.PoolClient,
  schema: string,
  table: TableToLoad,
  version: number,
): Promise<{ name: string; rows: number }> {
  const target = qualified(schema, table.name)
  const writable = table.columns.filter((c) => !c.generated).map((c) => quoteIdent(c.name))
  await client.query(`CREATE TEMPORARY TABLE fleetkit_restore_stage (LIKE ${target}) ON COMMIT DROP`)
  let inserted
  try {
    for await (const lines of table.batches()) {
      if (lines.length === 0) continue
      await client.query(
        'INSERT INTO fleetkit_restore_stage SELECT * FROM jsonb_populate_recordset(NULL::fleetkit_restore_stage, $1::jsonb)',
        [`[${lines.join(',')}]`],
      )
    }
    inserted = await client.query(
      `INSERT INTO ${target} (${writable.join(', ')}) OVERRIDING SYSTEM VALUE SELECT ${writable.join(', ')} FROM fleetkit_restore_stage`,
    )
  } catch (error) {
    throw rowsRefused(error, table.name, version) ?? error
  }
  await client.query('DROP TABLE fleetkit_restore_stage')
  const rows = inserted.rowCount ?? 0
  if (rows !== table.rows) {
    throw new FleetkitError(
      'BACKUP_INVALID',
      `table ${table.name} of the backup holds ${rows} rows, its manifest says ${table.rows}`,
      {
        actions: ['restore a backup written by fleetkit db backup, unchanged'],
        data: { table: table.name, rows, expected: table.rows, schemaVersion: version },
      },
    )
  }
  return { name: table.name, rows }
}

/**
 * A row the table refuses (class 22, data exception: a NUL, a bad number or time; class 23, a constraint) came
 * from the file, which every checksum passed: the backup was edited, or was never fleetkit's. Named by table and
 * SQLSTATE only (PostgreSQL's message may quote the row).
 */
function rowsRefused(error: unknown, table: string, version: number): FleetkitError | undefined {
  const state = sqlState(error)
  if (state === undefined || !(state.startsWith('22') || state.startsWith('23'))) return undefined
  return new FleetkitError(
    'BACKUP_INVALID',
    `PostgreSQL refused a row of table ${table} of the backup (SQLSTATE ${state}): the file was edited or is not a fleetkit backup; nothing was restored`,
    {
      actions: ['restore a backup written by fleetkit db backup, unchanged'],
      data: { table, sqlstate: state, schemaVersion: version },
      cause: error,
    },
  )
}
