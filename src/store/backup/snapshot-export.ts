// A logical snapshot of fleetkit's database: every table of its schema read in one REPEATABLE READ,
// READ ONLY transaction (one consistent view while gateways keep writing), as JSON lines per row.
import type pg from 'pg'

import { assertSchemaCompatible, type Migration } from '../migrate.js'
import { currentSchema, listSequences, listTables, qualified, type SchemaTable } from './schema-objects.js'
import { withTransaction } from '../transaction.js'

interface SnapshotTable extends SchemaTable {
  /** @minimum 0 */
  rows: number
}

export interface SnapshotSequence {
  name: string
  /** bigint as text. */
  lastValue: string
  isCalled: boolean
}

export interface Snapshot {
  /** The highest applied migration (null: a database no fleetkit migrated). */
  schemaVersion: number | null
  postgresVersion: string
  /** The snapshot's instant on the database's clock (its transaction's start). */
  takenAt: Date
  /** In foreign-key order: each after the tables it references. */
  tables: SnapshotTable[]
  sequences: SnapshotSequence[]
}

/** Receives a table's rows in batches, each row one line of JSON (to_jsonb of the row). */
export type SnapshotSink = (table: string, lines: string[]) => Promise<void>

/**
 * Reads every table through a cursor (batches of `batchRows`), so a large events table never sits
 * in memory whole. Refuses a database a newer fleetkit migrated (STATE_NEWER_THAN_CLI).
 */
export async function exportSnapshot(
  pool: pg.Pool,
  sink: SnapshotSink,
  options: { migrations?: Migration[]; batchRows?: number } = {},
): Promise<Snapshot> {
  const batchRows = options.batchRows ?? 2000
  return withTransaction(
    pool,
    async (client) => {
      await client.query('SET TRANSACTION READ ONLY')
      const status = await assertSchemaCompatible(client, options.migrations)
      const meta = await client.query<{ now: Date; version: string }>(
        "SELECT now() AS now, current_setting('server_version') AS version",
      )
      const schema = await currentSchema(client)
      const tables: SnapshotTable[] = []
      for (const table of await listTables(client, schema)) {
        let rows = 0
        await client.query(
          `DECLARE fleetkit_snapshot NO SCROLL CURSOR FOR SELECT to_jsonb(t)::text AS j FROM ONLY ${qualified(schema, table.name)} t`,
        )
        for (;;) {
          const batch = await client.query<{ j: string }>(`FETCH ${batchRows} FROM fleetkit_snapshot`)
          if (batch.rows.length === 0) break
          rows += batch.rows.length
          await sink(
            table.name,
            batch.rows.map((r) => r.j),
          )
        }
        await client.query('CLOSE fleetkit_snapshot')
        tables.push({ ...table, rows })
      }
      // Sequences are not transactional: read last, each is at least what any row read above holds.
      const sequences: SnapshotSequence[] = []
      for (const name of await listSequences(client, schema)) {
        const value = await client.query<{ last_value: string; is_called: boolean }>(
          `SELECT last_value::text AS last_value, is_called FROM ${qualified(schema, name)}`,
        )
        const row = value.rows[0]
        if (row) sequences.push({ name, lastValue: row.last_value, isCalled: row.is_called })
      }
      return {
        schemaVersion: status.version,
        postgresVersion: meta.rows[0]?.version ?? 'unknown',
        takenAt: meta.rows[0]?.now ?? new Date(),
        tables,
        sequences,
      }
    },
    { isolation: 'repeatable read' },
  )
}
