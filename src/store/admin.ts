// What `fleetkit db migrate | status | stop` do: describe which server holds the state and
// its schema, apply pending migrations, stop the embedded server. Commands only print.
import { existsSync } from 'node:fs'

import { resolveStateDir, type Env } from '../config/state-dir.js'
import { type Database, openDatabase } from './database.js'
import { embeddedServerPaths } from './embedded/paths.js'
import { inspectEmbeddedServer, stopEmbeddedServer } from './embedded/server.js'
import { describeArchive, type ArchiveStatus } from './embedded/archive-status.js'
import { migrate, schemaStatus, type SchemaStatus } from './migrate.js'
import { countNodesByStatus, type NodeStatus } from './nodes/nodes.js'
import { redactDatabaseUrl, sqlState, SQLSTATE } from './pg-errors.js'

export interface AdminOptions {
  env?: Env
  /** Overrides FLEETKIT_STATE_DIR / XDG_STATE_HOME. */
  stateDir?: string
  /** Told each slow step (creating, starting the embedded server, each migration); see openDatabase. */
  progress?: (message: string) => void
}

interface ServerDescription {
  source: 'embedded' | 'DATABASE_URL'
  /**
   * Password replaced by `***`.
   * @pattern ^(postgres(ql)?://[^:@/]*(:\*\*\*)?@|postgres(ql)?://[^@]*$|\(DATABASE_URL)
   */
  url: string | null
  embedded?: {
    stateDir: string
    dataDir: string
    initialised: boolean
    running: boolean
    /**
     * @asType integer
     * @nullable
     */
    pid: number | null
    /**
     * @minimum 1
     * @maximum 65535
     * @asType integer
     * @nullable
     */
    port: number | null
    logFile: string
  }
}

interface SchemaSummary {
  /**
   * @asType integer
   * @nullable
   */
  version: number | null
  /**
   * @minimum 0
   * @asType integer
   */
  latestKnown: number
  compatible: boolean
  applied: {
    /** @asType integer */
    version: number
    name: string
    /** @format date-time */
    appliedAt: string
  }[]
  pending: {
    /**
     * @minimum 1
     * @asType integer
     */
    version: number
    /** @minLength 1 */
    name: string
  }[]
  unknown: {
    /**
     * @minimum 1
     * @asType integer
     */
    version: number
    /** @minLength 1 */
    name: string
  }[]
  changed: {
    /**
     * @minimum 1
     * @asType integer
     */
    version: number
    /** @minLength 1 */
    name: string
  }[]
}

export interface DatabaseStatus {
  server: ServerDescription
  /** Null when the embedded server is not running (status does not start it). */
  schema: SchemaSummary | null
  nodes: {
    /**
     * @minimum 0
     * @asType integer
     */
    total: number
    byStatus: Record<NodeStatus, number>
  } | null
  /** Continuous archiving of the embedded server (absent for DATABASE_URL and a stopped server). */
  archive?: ArchiveStatus
}

/** Which server, which schema, how many nodes; never starts the embedded server, never migrates. */
export async function describeDatabase(options: AdminOptions = {}): Promise<DatabaseStatus> {
  const env = options.env ?? process.env
  const stateDir = options.stateDir ?? resolveStateDir(env)
  const databaseUrl = env.DATABASE_URL?.trim()
  if (!databaseUrl) {
    const state = await inspectEmbeddedServer(stateDir)
    const server = embeddedDescription(stateDir, state)
    if (!state.running) return { server, schema: null, nodes: null }
    const db = await openDatabase({ env: { ...env, DATABASE_URL: '' }, stateDir, schema: 'none', max: 2 })
    try {
      return {
        server: { ...server, url: db.url },
        ...(await describeSchemaAndNodes(db)),
        archive: await describeArchive(db.pool, stateDir, new Date()),
      }
    } finally {
      await db.close()
    }
  }
  const db = await openDatabase({ env, databaseUrl, schema: 'none', max: 2 })
  try {
    return { server: { source: 'DATABASE_URL', url: db.url }, ...(await describeSchemaAndNodes(db)) }
  } finally {
    await db.close()
  }
}

async function describeSchemaAndNodes(db: Database): Promise<Pick<DatabaseStatus, 'schema' | 'nodes'>> {
  const status = await schemaStatus(db.pool)
  let nodes: DatabaseStatus['nodes'] = null
  try {
    const byStatus = await countNodesByStatus(db.pool)
    nodes = { total: Object.values(byStatus).reduce((a, b) => a + b, 0), byStatus }
  } catch (error) {
    // Not migrated yet: there is no nodes table to count.
    if (sqlState(error) !== SQLSTATE.undefinedTable) throw error
  }
  return { schema: summarise(status), nodes }
}

export interface MigrationReport {
  server: ServerDescription
  applied: {
    /**
     * @minimum 1
     * @asType integer
     */
    version: number
    /** @minLength 1 */
    name: string
  }[]
  schema: SchemaSummary
}

/** Start the embedded server if needed, apply pending migrations, report what ran. */
export async function migrateDatabase(options: AdminOptions = {}): Promise<MigrationReport> {
  const env = options.env ?? process.env
  const stateDir = options.stateDir ?? resolveStateDir(env)
  const progress = options.progress ? { progress: options.progress } : {}
  const db = await openDatabase({ env, stateDir, schema: 'none', ...progress })
  try {
    const result = await migrate(db.pool, progress)
    const server: ServerDescription =
      db.source === 'embedded'
        ? { ...embeddedDescription(stateDir, await inspectEmbeddedServer(stateDir)), url: db.url }
        : { source: 'DATABASE_URL', url: db.url }
    return { server, applied: result.applied, schema: summarise(result.status) }
  } finally {
    await db.close()
  }
}

export interface StopReport {
  stateDir: string
  dataDir: string
  wasRunning: boolean
  /**
   * @asType integer
   * @nullable
   */
  pid: number | null
  /**
   * DATABASE_URL, redacted, when it is set: that server is not fleetkit's to stop.
   * @pattern ^(postgres(ql)?://[^:@/]*(:\*\*\*)?@|postgres(ql)?://[^@]*$|\(DATABASE_URL)
   */
  databaseUrl: string | null
}

/** Stop the embedded server of the state directory (a server in DATABASE_URL is left alone). */
export async function stopEmbeddedDatabase(options: AdminOptions = {}): Promise<StopReport> {
  const env = options.env ?? process.env
  const stateDir = options.stateDir ?? resolveStateDir(env)
  const paths = embeddedServerPaths(stateDir)
  const url = env.DATABASE_URL?.trim()
  const result = existsSync(paths.root) ? await stopEmbeddedServer(stateDir) : { wasRunning: false }
  return {
    stateDir,
    dataDir: paths.dataDir,
    wasRunning: result.wasRunning,
    pid: result.pid ?? null,
    databaseUrl: url ? redactDatabaseUrl(url) : null,
  }
}

function embeddedDescription(
  stateDir: string,
  state: Awaited<ReturnType<typeof inspectEmbeddedServer>>,
): ServerDescription {
  return {
    source: 'embedded',
    url: state.running && state.port ? `postgres://fleetkit:***@127.0.0.1:${state.port}/fleetkit` : null,
    embedded: {
      stateDir,
      dataDir: state.dataDir,
      initialised: state.initialised,
      running: state.running,
      pid: state.pid ?? null,
      port: state.port ?? null,
      logFile: state.logFile,
    },
  }
}

function summarise(status: SchemaStatus): SchemaSummary {
  return {
    version: status.version,
    latestKnown: status.latestKnown,
    compatible: status.compatible,
    applied: status.applied.map((m) => ({ version: m.version, name: m.name, appliedAt: m.appliedAt.toISOString() })),
    pending: status.pending,
    unknown: status.unknown,
    changed: status.changed,
  }
}
