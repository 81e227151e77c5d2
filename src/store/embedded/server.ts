// The embedded PostgreSQL in <stateDir>/postgres: initialised once, started on demand as a
// detached server that outlives the command, and shared by every fleetkit process on the machine.
//
// One server per data directory: a lock file serialises starting it, and PostgreSQL's own
// postmaster.pid (created exclusively by the server) is the final word on whether one runs.
// A process that finds a ready server (server.json's PID and port match postmaster.pid) just
// connects. The server keeps running after the command ends; `fleetkit db stop` stops it.
import { existsSync } from 'node:fs'
import { rm, stat } from 'node:fs/promises'
import { join } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { LockTimeoutError, withFileLock } from '../../fs/file-lock.js'
import { connectFailure } from '../pg-errors.js'
import { embeddedBinaries, postgresRunAs } from '../postgres-binaries.js'
import { initialiseDataDir, removeInitLeftovers } from './initdb.js'
import {
  EMBEDDED_DATABASE,
  EMBEDDED_HOST,
  EMBEDDED_USER,
  embeddedServerPaths,
  type EmbeddedServerPaths,
} from './paths.js'
import { readOrCreatePassword, readPasswordFile } from './password-file.js'
import type { TrustRules } from '../../fs/trusted-directory.js'
import { assertStateTrusted, prepareDirectories } from './permissions.js'
import { sharedStateOwner } from './shared-state.js'
import {
  findReadyServer,
  isPostgresProcess,
  type PostmasterPid,
  readPostmasterPid,
  writeServerRecord,
} from './postmaster.js'
import { ensureFleetkitDatabase, lastLogLine, logSince, logSize, requireBinaries, startServer } from './process.js'
import { firstFatalLine, saysDiskFull } from './postgres-says.js'
import { waitUntilGone, waitUntilReady } from './readiness.js'

export interface EmbeddedServer {
  host: string
  port: number
  pid: number
  user: string
  database: string
  password: string
  dataDir: string
  /** True when this call started (or initialised and started) the server. */
  started: boolean
  initialised: boolean
}

export interface EmbeddedServerState {
  dataDir: string
  initialised: boolean
  running: boolean
  pid?: number
  port?: number
  logFile: string
}

export interface EnsureEmbeddedServerOptions {
  /** How long to wait for the lock and for the server to become ready. */
  timeoutMs?: number
  /**
   * Told each slow step (initialising, starting) before it begins, in one line for a person;
   * a server found running is silent. The command layer decides where (if anywhere) it goes.
   */
  progress?: (message: string) => void
  /** Whose state directories are trusted (src/fs/trusted-directory.ts); tests name a stand-in gateway account. */
  trust?: TrustRules
}

/** Start the embedded server unless it runs; return how to connect to it. */
export async function ensureEmbeddedServer(
  stateDir: string,
  options: EnsureEmbeddedServerOptions = {},
): Promise<EmbeddedServer> {
  const paths = embeddedServerPaths(stateDir)
  const timeoutMs = options.timeoutMs ?? 120_000
  const progress = options.progress ?? (() => undefined)
  // Before anything there is trusted: a password or a server another user planted would be used as ours.
  await assertStateTrusted(paths, options.trust)
  // The common case, a server already running, costs two small file reads.
  const known = await readPasswordFile(paths.passwordFile).catch(() => '')
  const ready = known ? await findReadyServer(paths) : undefined
  if (ready) return { ...connection(paths, ready, known), started: false, initialised: false }

  // create: on a machine without the postgres user, root's first start must make the
  // directories passable for the user initdb is about to create.
  const runAs = await postgresRunAs({ root: paths.root, create: true })
  await prepareDirectories(paths, runAs, options.trust)
  const password = await readOrCreatePassword(paths.passwordFile)
  const running = await findReadyServer(paths)
  if (running) return { ...connection(paths, running, password), started: false, initialised: false }
  if (!runAs) await refuseAnotherAccountsServer(paths)

  try {
    return await withFileLock(paths.lockFile, () => startLocked(paths, password, timeoutMs, progress), { timeoutMs })
  } catch (error) {
    if (error instanceof LockTimeoutError) {
      throw new FleetkitError(
        'STATE_EMBEDDED_START_FAILED',
        `another fleetkit process (PID ${error.holder ?? 'unknown'}) has been starting the embedded PostgreSQL for too long`,
        {
          actions: [error.removeAction, 'fleetkit db status'],
          data: { lockFile: paths.lockFile, holder: error.holder },
        },
      )
    }
    throw error
  }
}

/**
 * Not root: a server whose data directory (or, not initialised yet, whose shared `postgres/`)
 * belongs to another account cannot be started by this user; PostgreSQL would refuse it anyway.
 */
async function refuseAnotherAccountsServer(paths: EmbeddedServerPaths): Promise<void> {
  const uid = process.getuid?.()
  if (uid === undefined) return
  const data = await stat(paths.dataDir).catch(() => undefined)
  const owner = data?.uid ?? (await sharedStateOwner(paths))?.uid
  if (owner === undefined || owner === uid) return
  throw new FleetkitError(
    'STATE_SERVER_NOT_STARTABLE',
    `the embedded PostgreSQL of ${paths.stateDir} is not running and belongs to uid ${owner}, not to this user (uid ${uid}); start it as that account: sudo systemctl start fleetkit-gateway`,
    {
      actions: ['sudo systemctl start fleetkit-gateway', 'or run this command as root (sudo fleetkit ...)'],
      data: { stateDir: paths.stateDir, ownerUid: owner, uid },
    },
  )
}

/** What the state directory says about the embedded server, without starting it. */
export async function inspectEmbeddedServer(stateDir: string): Promise<EmbeddedServerState> {
  const paths = embeddedServerPaths(stateDir)
  const initialised = existsSync(join(paths.dataDir, 'PG_VERSION'))
  const pm = await readPostmasterPid(paths.dataDir)
  const running = pm !== undefined && isPostgresProcess(pm.pid, paths.dataDir) && pm.status === 'ready'
  return {
    dataDir: paths.dataDir,
    initialised,
    running,
    ...(running && pm ? { pid: pm.pid, port: pm.port } : {}),
    logFile: paths.logFile,
  }
}

/**
 * The PID of the embedded server's postmaster while it lives, undefined when it is gone (no
 * postmaster.pid, or its PID is dead or now another program's). Starting or stopping counts as
 * alive: only a gone server may be started again (the gateway's health check, database-health.ts).
 */
export async function livePostmasterPid(stateDir: string): Promise<number | undefined> {
  const { dataDir } = embeddedServerPaths(stateDir)
  const pm = await readPostmasterPid(dataDir)
  return pm !== undefined && isPostgresProcess(pm.pid, dataDir) ? pm.pid : undefined
}

export interface StopResult {
  wasRunning: boolean
  pid?: number
}

/** Stop the embedded server (fast shutdown: sessions are disconnected, open transactions roll back). */
export async function stopEmbeddedServer(stateDir: string, options: { timeoutMs?: number } = {}): Promise<StopResult> {
  const paths = embeddedServerPaths(stateDir)
  const timeoutMs = options.timeoutMs ?? 60_000
  if (!existsSync(paths.root)) return { wasRunning: false }
  try {
    return await withFileLock(paths.lockFile, () => stopHoldingLock(paths, timeoutMs), { timeoutMs })
  } catch (error) {
    if (!(error instanceof LockTimeoutError)) throw error
    throw startLockBusy(paths, error, timeoutMs, 'this stop waits; nothing was stopped')
  }
}

/**
 * STATE_EMBEDDED_BUSY: a stop or a restore to a time waited `timeoutMs` for the start lock, held by a
 * start, a restore to a time (it holds the lock for its whole recovery) or a stop. `outcome` ends the
 * sentence: who waited, and what it left as it was.
 */
export function startLockBusy(
  paths: EmbeddedServerPaths,
  error: LockTimeoutError,
  timeoutMs: number,
  outcome: string,
): FleetkitError {
  return new FleetkitError(
    'STATE_EMBEDDED_BUSY',
    `another fleetkit process${error.holder ? ` (PID ${error.holder})` : ''} held ${paths.lockFile} (a start, a restore to a time or a stop of the embedded PostgreSQL) for the ${Math.round(timeoutMs / 1000)} s ${outcome}`,
    {
      actions: ['run it again once that process has finished', error.removeAction, 'fleetkit db status'],
      data: { lockFile: paths.lockFile, holder: error.holder ?? null },
      cause: error,
    },
  )
}

/**
 * The stop itself, for a caller that holds the start lock already (a restore that must swap the
 * data directory before anyone, a gateway among them, can start the old server again).
 */
export async function stopHoldingLock(paths: EmbeddedServerPaths, timeoutMs: number): Promise<StopResult> {
  const pm = await readPostmasterPid(paths.dataDir)
  // server.json stays: its port is reused at the next start (see startServer).
  if (!pm || !isPostgresProcess(pm.pid, paths.dataDir)) return { wasRunning: false }
  process.kill(pm.pid, 'SIGINT')
  if (!(await waitUntilGone(pm.pid, timeoutMs))) {
    throw new FleetkitError(
      'STATE_EMBEDDED_START_FAILED',
      `the embedded PostgreSQL (PID ${pm.pid}) did not stop within ${Math.round(timeoutMs / 1000)} s`,
      {
        actions: [`kill -QUIT ${pm.pid}`, `read ${paths.logFile}`],
        data: { pid: pm.pid, logFile: paths.logFile },
      },
    )
  }
  return { wasRunning: true, pid: pm.pid }
}

async function startLocked(
  paths: EmbeddedServerPaths,
  password: string,
  timeoutMs: number,
  progress: (message: string) => void,
): Promise<EmbeddedServer> {
  requireBinaries()
  // Holding the lock, nobody else initialises: a half-made directory here is a killed one's.
  await removeInitLeftovers(paths)
  let initialised = false
  for (let attempt = 1; ; attempt++) {
    const pm = await readPostmasterPid(paths.dataDir)
    if (pm && isPostgresProcess(pm.pid, paths.dataDir)) {
      // A server runs (perhaps started by a process that broke a stale lock): wait for it.
      const ready = await waitUntilReady(paths.dataDir, pm.pid, undefined, timeoutMs)
      if (ready) return finish(paths, ready, password, false, initialised)
    } else if (pm) {
      // The server died without cleaning up (kill -9, a crash, a reboot that reused its PID).
      await rm(join(paths.dataDir, 'postmaster.pid'), { force: true })
    }
    if (!existsSync(join(paths.dataDir, 'PG_VERSION'))) {
      progress(`Creating the embedded PostgreSQL database in ${paths.dataDir} (first run, a few seconds)`)
      await initialiseDataDir(paths, password)
      initialised = true
    }
    progress('Starting the embedded PostgreSQL server')
    const logFrom = logSize(paths.logFile)
    const started = await startServer(paths, timeoutMs)
    if (started) return finish(paths, started, password, true, initialised)
    if (attempt >= 3) throw startFailure(paths, logSince(paths.logFile, logFrom))
  }
}

/**
 * A server that would not start: the first FATAL or PANIC line this start wrote to its log says why (its
 * last lines say only "shutting down due to startup process failure"). A full disk (it cannot write its
 * lock file, or recovery its WAL) is STATE_DISK_FULL: free space, nothing else is wrong.
 */
function startFailure(paths: EmbeddedServerPaths, log: string): FleetkitError {
  const fatal = firstFatalLine(log)
  const data = { logFile: paths.logFile, dataDir: paths.dataDir }
  if (fatal !== undefined && saysDiskFull(fatal))
    return new FleetkitError(
      'STATE_DISK_FULL',
      `the embedded PostgreSQL could not start: the disk of ${paths.root} is full (${fatal})`,
      {
        actions: [`free space on the filesystem of ${paths.root} (df -h ${paths.root})`, 'then run the command again'],
        data,
      },
    )
  return new FleetkitError(
    'STATE_EMBEDDED_START_FAILED',
    `the embedded PostgreSQL did not start: ${fatal ?? lastLogLine(paths.logFile)}`,
    { actions: [`read ${paths.logFile}`, 'fleetkit db status'], data },
  )
}

async function finish(
  paths: EmbeddedServerPaths,
  pm: PostmasterPid,
  password: string,
  started: boolean,
  initialised: boolean,
): Promise<EmbeddedServer> {
  await writeServerRecord(paths.serverFile, {
    pid: pm.pid,
    port: pm.port,
    dataDir: paths.dataDir,
    startedAt: new Date().toISOString(),
    binaries: embeddedBinaries()?.dir ?? 'unknown',
  })
  await ensureEmbeddedDatabase({ port: pm.port, password })
  return { ...connection(paths, pm, password), started, initialised }
}

/**
 * Create the `fleetkit` database in the running server unless it exists: at every start, and when a
 * connection to a server found running says it is missing (3D000: the start that created the server
 * failed at CREATE DATABASE, its disk full, and left the server running). Idempotent; two processes
 * at once both succeed (the loser's duplicate is ignored). A failure is coded as a connect failure.
 */
export async function ensureEmbeddedDatabase(server: { port: number; password: string }): Promise<void> {
  try {
    await ensureFleetkitDatabase(server.port, server.password)
  } catch (error) {
    throw connectFailure(error, `postgres://${EMBEDDED_USER}:***@${EMBEDDED_HOST}:${server.port}/postgres`, 'embedded')
  }
}

function connection(paths: EmbeddedServerPaths, pm: PostmasterPid, password: string) {
  return {
    host: EMBEDDED_HOST,
    port: pm.port,
    pid: pm.pid,
    user: EMBEDDED_USER,
    database: EMBEDDED_DATABASE,
    password,
    dataDir: paths.dataDir,
  }
}
