// What fleetkit's schema holds, read from PostgreSQL's catalogs: its tables in foreign-key order
// with their columns, its sequences; and removing all of it (a restore replaces the whole schema).
import type { Queryable } from '../transaction.js'

export interface TableColumn {
  name: string
  /** format_type(): `text`, `timestamp with time zone`, `bigint`, ... */
  type: string
  /** A generated column: never written, PostgreSQL computes it. */
  generated: boolean
}

export interface SchemaTable {
  name: string
  columns: TableColumn[]
}

/** Identifiers quoted as PostgreSQL's quote_ident would. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

/** `schema.table`, both quoted. */
export function qualified(schema: string, name: string): string {
  return `${quoteIdent(schema)}.${quoteIdent(name)}`
}

export async function currentSchema(q: Queryable): Promise<string> {
  const result = await q.query<{ schema: string }>('SELECT current_schema() AS schema')
  const schema = result.rows[0]?.schema
  if (!schema) throw new Error('the connection has no current schema')
  return schema
}

/**
 * The schema's tables (not an extension's), each after the tables its foreign keys reference, so
 * rows load in this order; a table referencing itself loads in one statement (see snapshot-load.ts).
 */
export async function listTables(q: Queryable, schema: string): Promise<SchemaTable[]> {
  const tables = await q.query<{ oid: number; name: string }>(
    `SELECT c.oid::int AS oid, c.relname AS name
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
      ORDER BY c.relname`,
    [schema],
  )
  const columns = await q.query<{ table: string; name: string; type: string; generated: boolean }>(
    `SELECT c.relname AS table, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
            a.attgenerated <> '' AS generated
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY c.relname, a.attnum`,
    [schema],
  )
  const references = await q.query<{ from: string; to: string }>(
    `SELECT f.relname AS from, t.relname AS to
       FROM pg_constraint k
       JOIN pg_class f ON f.oid = k.conrelid JOIN pg_class t ON t.oid = k.confrelid
       JOIN pg_namespace n ON n.oid = f.relnamespace
      WHERE k.contype = 'f' AND n.nspname = $1`,
    [schema],
  )
  const byName = new Map<string, SchemaTable>(tables.rows.map((t) => [t.name, { name: t.name, columns: [] }]))
  for (const c of columns.rows)
    byName.get(c.table)?.columns.push({ name: c.name, type: c.type, generated: c.generated })
  const needs = new Map<string, Set<string>>([...byName.keys()].map((name) => [name, new Set<string>()]))
  for (const r of references.rows) if (r.from !== r.to && byName.has(r.to)) needs.get(r.from)?.add(r.to)
  return foreignKeyOrder([...byName.values()], needs)
}

/** Kahn's order, alphabetical among equals so the same schema always gives the same order. */
function foreignKeyOrder(tables: SchemaTable[], needs: Map<string, Set<string>>): SchemaTable[] {
  const ordered: SchemaTable[] = []
  const placed = new Set<string>()
  let remaining = [...tables]
  while (remaining.length > 0) {
    const ready = remaining.filter((t) => [...(needs.get(t.name) ?? [])].every((n) => placed.has(n)))
    // A cycle of foreign keys between tables (fleetkit has none): load the rest as they come.
    const next = ready.length > 0 ? ready : remaining
    for (const t of next) {
      ordered.push(t)
      placed.add(t.name)
    }
    remaining = remaining.filter((t) => !placed.has(t.name))
  }
  return ordered
}

/** The schema's sequences (bigserial columns' and any other), not an extension's. */
export async function listSequences(q: Queryable, schema: string): Promise<string[]> {
  const result = await q.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind = 'S'
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
      ORDER BY c.relname`,
    [schema],
  )
  return result.rows.map((r) => r.name)
}

/** Tables of the schema holding at least one row, schema_migrations aside (a migrated empty database is empty). */
export async function tablesWithRows(q: Queryable, schema: string): Promise<string[]> {
  const names = (await listTables(q, schema)).map((t) => t.name).filter((n) => n !== 'schema_migrations')
  const found: string[] = []
  for (const name of names) {
    const result = await q.query(`SELECT 1 FROM ${qualified(schema, name)} LIMIT 1`)
    if ((result.rowCount ?? 0) > 0) found.push(name)
  }
  return found
}

/**
 * Removes every table, view, sequence, function and type of the schema that no extension owns: what
 * the migrations made and anything else in the database's schema. Run inside the restore's transaction.
 */
export async function dropSchemaObjects(q: Queryable, schema: string): Promise<void> {
  const notExtension = (catalog: string, oid: string) =>
    `NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = '${catalog}'::regclass AND d.objid = ${oid} AND d.deptype = 'e')`
  const relations = await q.query<{ name: string; kind: string }>(
    `SELECT c.relname AS name, c.relkind::text AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') AND ${notExtension('pg_class', 'c.oid')}`,
    [schema],
  )
  const statement: Record<string, string> = {
    r: 'TABLE',
    p: 'TABLE',
    v: 'VIEW',
    m: 'MATERIALIZED VIEW',
    S: 'SEQUENCE',
    f: 'FOREIGN TABLE',
  }
  // Tables first: CASCADE takes their views and owned sequences with them.
  const rank = (kind: string) => (kind === 'r' || kind === 'p' ? 0 : 1)
  for (const r of relations.rows.sort((a, b) => rank(a.kind) - rank(b.kind)))
    await q.query(`DROP ${statement[r.kind]} IF EXISTS ${qualified(schema, r.name)} CASCADE`)
  const functions = await q.query<{ signature: string }>(
    `SELECT p.oid::regprocedure::text AS signature FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = $1 AND ${notExtension('pg_proc', 'p.oid')}`,
    [schema],
  )
  // regprocedure prints the name qualified when the schema is not on the search path, quoted where needed.
  for (const f of functions.rows) await q.query(`DROP ROUTINE IF EXISTS ${f.signature} CASCADE`)
  const types = await q.query<{ name: string }>(
    `SELECT t.typname AS name FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE n.nspname = $1 AND t.typtype IN ('e', 'd', 'r', 'm') AND ${notExtension('pg_type', 't.oid')}`,
    [schema],
  )
  for (const t of types.rows) await q.query(`DROP TYPE IF EXISTS ${qualified(schema, t.name)} CASCADE`)
}
