// Opening fleetkit's PostgreSQL: a pg pool on DATABASE_URL, or on the embedded server in
// the state directory; the schema is checked before first use (the embedded one migrated).
import type pg from 'pg'

import { resolveStateDir, type Env } from '../config/state-dir.js'
import { EMBEDDED_DATABASE, EMBEDDED_HOST, EMBEDDED_USER, embeddedServerPaths } from './embedded/paths.js'
import { readServerRecordSync } from './embedded/postmaster.js'
import { ensureEmbeddedDatabase, ensureEmbeddedServer } from './embedded/server.js'
import { assertSchemaCurrent, migrate } from './migrate.js'
import { connectFailure, isConnectionError, redactDatabaseUrl, sqlState, SQLSTATE } from './pg-errors.js'
import { stateClientClass } from './state-client.js'

export interface Database {
  pool: pg.Pool
  /** The connection URL with the password replaced by `***`; the only form that is ever printed. */
  url: string
  /** `embedded`: the server in the state directory; `DATABASE_URL`: a server the operator named. */
  source: 'embedded' | 'DATABASE_URL'
  /** The embedded server's PID and data directory; undefined for DATABASE_URL. */
  embedded?: { pid: number; port: number; dataDir: string; started: boolean }
  close(): Promise<void>
}

export interface OpenDatabaseOptions {
  /** A PostgreSQL URL; defaults to env.DATABASE_URL. Unset or empty: the embedded server. */
  databaseUrl?: string
  /** Where the embedded server lives; defaults to resolveStateDir(env). */
  stateDir?: string
  env?: Env
  /**
   * `auto` (default): the embedded server's database is this machine's own, so it is migrated;
   * a DATABASE_URL database may be shared by gateways and CLIs of several versions, so its schema
   * is only checked (`current`): changing it is `fleetkit db migrate`'s decision alone.
   * `migrate`: apply pending migrations, refuse a newer schema.
   * `current`: refuse an older schema (STATE_SCHEMA_OLD) or a newer one (STATE_NEWER_THAN_CLI), apply nothing.
   * `none`: connect only (db status, db migrate).
   */
  schema?: 'auto' | 'migrate' | 'current' | 'none'
  /** Pool size; 10 by default. */
  max?: number
  /** How long a query waits for a free pooled connection before failing (10 s by default). */
  connectionTimeoutMs?: number
  /**
   * How long a statement may wait for the server's answer before it fails as a lost connection (08006) and
   * its connection is dropped (none by default: a restore or a backup reads for as long as it takes). A
   * server that went silent without a reset (a partition, a frozen host) otherwise holds each statement sent
   * to it until the kernel gives up retransmitting, about 15 minutes.
   */
  queryTimeoutMs?: number
  /** Called when an idle pooled connection fails (server restart, network); the pool drops it. */
  onIdleError?: (error: Error) => void
  /**
   * Told each slow step (creating and starting the embedded server, applying migrations) before
   * it begins, in one line for a person. The library never prints; a command passes a function
   * that writes to a terminal.
   */
  progress?: (message: string) => void
}

export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<Database> {
  const env = options.env ?? process.env
  const databaseUrl = (options.databaseUrl ?? env.DATABASE_URL ?? '').trim()
  const { default: pgModule } = await import('pg')
  // Client: a connection that cannot be made is SQLSTATE 08001, one lost under a statement 08006 (state-client.ts), not a bare driver error.
  const base: pg.PoolConfig = {
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 10_000,
    idleTimeoutMillis: 30_000,
    // An idle connection whose server went silent is found by the kernel's probes, not at its next use.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    ...(options.queryTimeoutMs === undefined ? {} : { query_timeout: options.queryTimeoutMs }),
    application_name: 'fleetkit',
    Client: stateClientClass(pgModule),
  }

  let database: Database
  if (databaseUrl) {
    const url = redactDatabaseUrl(databaseUrl)
    const pool = new pgModule.Pool({ ...base, connectionString: databaseUrl })
    database = wrap(pool, url, 'DATABASE_URL', undefined, options.onIdleError)
    await checkConnection(database)
  } else {
    const stateDir = options.stateDir ?? resolveStateDir(env)
    database = await openEmbedded(pgModule, base, stateDir, options.onIdleError, options.progress)
  }

  const schema = options.schema ?? 'auto'
  const mode = schema === 'auto' ? (database.source === 'embedded' ? 'migrate' : 'current') : schema
  try {
    if (mode === 'migrate')
      await migrate(database.pool, { ...(options.progress ? { progress: options.progress } : {}) })
    else if (mode === 'current') await assertSchemaCurrent(database.pool, database.url)
  } catch (error) {
    await database.close()
    throw error
  }
  return database
}

/**
 * The embedded pool's Client: each new connection goes to the port the server runs on now (its
 * server.json), so a pool that outlives a restart on another port (its old one taken meanwhile:
 * by any program, or as a connection's local port) follows it rather than knocking on a stranger's
 * door. While no record is readable (between a death and a restart) the last port seen is used.
 */
function followingServerPort(base: typeof pg.Client, port: number, serverFile: string): typeof pg.Client {
  let lastPort = port
  return class EmbeddedClient extends base {
    constructor(config?: string | pg.ClientConfig) {
      lastPort = readServerRecordSync(serverFile)?.port ?? lastPort
      super(typeof config === 'object' ? withPort(config, lastPort) : config)
    }
  }
}

/** A copy with every property descriptor (pg-pool keeps the password non-enumerable) and another port. */
function withPort(config: pg.ClientConfig, port: number): pg.ClientConfig {
  const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(config)) as pg.ClientConfig
  copy.port = port
  return copy
}

async function openEmbedded(
  pgModule: typeof pg,
  base: pg.PoolConfig,
  stateDir: string,
  onIdleError: OpenDatabaseOptions['onIdleError'],
  progress: OpenDatabaseOptions['progress'],
): Promise<Database> {
  // A server found running may die before we connect: then take the slow path once more.
  for (let attempt = 1; ; attempt++) {
    const server = await ensureEmbeddedServer(stateDir, progress ? { progress } : {})
    const url = `postgres://${EMBEDDED_USER}:***@${EMBEDDED_HOST}:${server.port}/${EMBEDDED_DATABASE}`
    const pool = new pgModule.Pool({
      ...base,
      Client: followingServerPort(stateClientClass(pgModule), server.port, embeddedServerPaths(stateDir).serverFile),
      host: server.host,
      port: server.port,
      user: server.user,
      password: server.password,
      database: server.database,
    })
    const database = wrap(
      pool,
      url,
      'embedded',
      { pid: server.pid, port: server.port, dataDir: server.dataDir, started: server.started },
      onIdleError,
    )
    try {
      await checkConnection(database)
      return database
    } catch (error) {
      await database.close()
      const cause = (error as { cause?: unknown }).cause ?? error
      const missing = sqlState(cause) === SQLSTATE.invalidCatalogName
      if (attempt >= 2 || !(isConnectionError(cause) || missing)) throw error
      // A server found running without its database: the start that made it failed at CREATE DATABASE
      // (a full disk) and left it running, so no later start would create it. Create it now.
      if (missing) await ensureEmbeddedDatabase(server)
    }
  }
}

function wrap(
  pool: pg.Pool,
  url: string,
  source: Database['source'],
  embedded: Database['embedded'],
  onIdleError: OpenDatabaseOptions['onIdleError'],
): Database {
  // Without a listener an idle client's error (server restart, dropped network) crashes the process.
  pool.on('error', (error) => {
    if (onIdleError) onIdleError(error)
    else
      process.stderr.write(
        `fleetkit: an idle database connection to ${url} failed (${sqlState(error) ?? (error as { code?: string }).code ?? 'no code'}); it was dropped\n`,
      )
  })
  let closed = false
  const database: Database = {
    pool,
    url,
    source,
    ...(embedded ? { embedded } : {}),
    close: async () => {
      if (closed) return
      closed = true
      await pool.end()
    },
  }
  // Keep the pool (and the password inside its options) out of util.inspect and JSON.
  Object.defineProperty(database, 'pool', { enumerable: false })
  Object.defineProperty(database, 'toJSON', {
    enumerable: false,
    value: () => ({ url, source, ...(embedded ? { embedded } : {}) }),
  })
  return database
}

async function checkConnection(database: Database): Promise<void> {
  // 57P03: the server is starting up or recovering; give it a moment.
  for (let attempt = 1; ; attempt++) {
    try {
      await database.pool.query('SELECT 1')
      return
    } catch (error) {
      if (sqlState(error) === SQLSTATE.cannotConnectNow && attempt < 50) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        continue
      }
      throw connectFailure(error, database.url, database.source)
    }
  }
}

// Where every store module has always found them; they live in transaction.ts so that migrate.ts,
// which openDatabase calls, needs nothing of this file.
export { type Queryable, withTransaction } from './transaction.js'
