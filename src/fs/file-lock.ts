// A cross-process lock on one file, created with O_EXCL and holding the owner's PID so a dead owner's
// lock is broken. In src/fs because the PKI writers need it too, and src/pki may not touch the store.
//
// Breaking a stale lock is the delicate part: a waiter can only remove the file by its name, so two
// waiters that both saw the dead holder could each remove "the" lock, the second one removing the
// first one's new, live lock (two holders at once). Breakers therefore take turns: each first creates
// `<lock>.break` with O_EXCL, and only while holding it looks again and removes the stale file. No one
// else removes a file it did not create (a holder removes only its own), so the stale content seen
// under the claim is the stale file, still there when it is removed.
//
// A holder is gone when its PID is dead, and also when its PID now belongs to another process (a
// reboot or a wrapped PID counter reused it): the token records the boot's id and the process's start
// time from /proc, compared with what /proc says of that PID now.
import { randomBytes } from 'node:crypto'
import { link, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises'

import { sleepUnlessAborted } from '../config/abortable-sleep.js'

export interface FileLockOptions {
  timeoutMs?: number
  pollMs?: number
  /** Whether a PID is a live process; injectable for tests. */
  isAlive?: (pid: number) => boolean
  /** Called once, when the lock is first seen held by a live process: a caller says what it waits for. */
  onWait?: (holder: number) => void
  /**
   * For tests: called by a breaker holding the right to break, just before it removes the stale lock
   * (`stale`, its content). A pause here is where two breakers once removed each other's locks.
   */
  beforeBreak?: (stale: string) => Promise<void>
  /**
   * Ctrl-C or SIGTERM of the command that waits: the wait ends at once, rejecting with the signal's
   * reason, and nothing is taken. Without it an interrupted command sat out the whole timeout.
   */
  signal?: AbortSignal
}

/** A file without a holder's PID (a creator killed before writing it) older than this is stale. */
const UNWRITTEN_STALE_MS = 5_000

export function processIsAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as { code?: string }).code === 'EPERM'
  }
}

/**
 * Which process a PID is, beyond its number: `<boot id>/<start time in clock ticks since boot>`, from
 * /proc; undefined where /proc cannot say (not Linux, a hidden /proc, a process gone meanwhile).
 */
export async function processIdentity(pid: number): Promise<string | undefined> {
  try {
    const [boot, stat] = await Promise.all([
      readFile('/proc/sys/kernel/random/boot_id', 'utf8'),
      readFile(`/proc/${pid}/stat`, 'utf8'),
    ])
    // The command name (field 2) is in parentheses and may hold spaces and ')': count after the last ')'.
    // Field 22, starttime, is then the 20th (field 3, the state, is the first).
    const startTicks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
    if (!startTicks || !/^[0-9]+$/.test(startTicks)) return undefined
    return `${boot.trim()}/${startTicks}`
  } catch {
    return undefined
  }
}

export class LockTimeoutError extends Error {
  constructor(
    readonly path: string,
    readonly holder: number | undefined,
  ) {
    super(`timed out waiting for the lock ${path}${holder ? ` held by PID ${holder}` : ''}`)
    this.name = 'LockTimeoutError'
  }

  /**
   * The next step for a lock nobody will release: a holder whose PID is alive but no fleetkit process (a
   * token older than the identity check, after a reboot), or a file without a PID.
   */
  get removeAction(): string {
    return this.holder
      ? `if PID ${this.holder} is not a fleetkit command (ps -p ${this.holder} -o args), remove ${this.path}`
      : `if no fleetkit command is running, remove ${this.path}`
  }
}

/** Run `fn` while holding the lock file `path`; the lock is removed afterwards, also on error. */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const token = await acquire(path, options)
  try {
    return await fn()
  } finally {
    await releaseOwn(path, token)
  }
}

/** Removes `path` only while it holds `token`: a lock broken as stale and taken by another stays theirs. */
async function releaseOwn(path: string, token: string): Promise<void> {
  const content = await readFile(path, 'utf8').catch(() => '')
  if (content === token) await unlink(path).catch(() => undefined)
}

let ownIdentity: Promise<string | undefined> | undefined

async function newToken(): Promise<string> {
  ownIdentity ??= processIdentity(process.pid)
  const identity = await ownIdentity
  return `${process.pid} ${Date.now()} ${randomBytes(6).toString('hex')}${identity ? ` ${identity}` : ''}\n`
}

async function createExclusive(path: string, token: string): Promise<boolean> {
  try {
    await writeFile(path, token, { flag: 'wx', mode: 0o600 })
    return true
  } catch (error) {
    if ((error as { code?: string }).code === 'EEXIST') return false
    throw error
  }
}

/** The PID of a whole token (written in one write, ending in a newline); undefined for one being written. */
function holderOf(content: string): number | undefined {
  if (!content.endsWith('\n')) return undefined
  const pid = Number.parseInt(content.split(' ')[0] ?? '', 10)
  return Number.isInteger(pid) && pid > 0 ? pid : undefined
}

/** Whether the lock or claim file `path`, seen holding `content`, belongs to nobody any more. */
async function isStale(path: string, content: string, isAlive: (pid: number) => boolean): Promise<boolean> {
  const holder = holderOf(content)
  if (holder === undefined) {
    // An empty or half-written file is a holder that is still writing it: stale only when it is old
    // (a creator that died between creating the file and writing its PID).
    const age = await stat(path)
      .then((s) => Date.now() - s.mtimeMs)
      .catch(() => 0)
    return age > UNWRITTEN_STALE_MS
  }
  if (!isAlive(holder)) return true
  const recorded = content.trim().split(' ')[3]
  // A token without an identity (an older fleetkit's, or no /proc) is judged by its PID alone.
  if (recorded === undefined) return false
  const now = await processIdentity(holder)
  return now !== undefined && now !== recorded
}

async function acquire(path: string, options: FileLockOptions): Promise<string> {
  const timeoutMs = options.timeoutMs ?? 120_000
  const pollMs = options.pollMs ?? 50
  const isAlive = options.isAlive ?? processIsAlive
  const token = await newToken()
  const deadline = Date.now() + timeoutMs
  let told = false
  for (;;) {
    options.signal?.throwIfAborted()
    if (await createExclusive(path, token)) return token
    const held = await readFile(path, 'utf8').catch(() => undefined)
    if (held === undefined) continue // released between our attempt and our read
    const holder = holderOf(held)
    if (await isStale(path, held, isAlive)) {
      if (await breakStale(path, held, isAlive, options)) continue
      // Another waiter is breaking it right now: wait a poll, as for a holder.
    } else if (!told && holder !== undefined) {
      told = true
      options.onWait?.(holder)
    }
    if (Date.now() > deadline) throw new LockTimeoutError(path, holder)
    if (options.signal) await sleepUnlessAborted(pollMs, options.signal)
    else await new Promise((resolve) => setTimeout(resolve, pollMs))
  }
}

/**
 * Removes the stale lock `path` (seen holding `stale`) holding the claim `<path>.break`. True when the
 * lock may be tried again at once; false when another breaker holds the claim.
 */
async function breakStale(
  path: string,
  stale: string,
  isAlive: (pid: number) => boolean,
  options: FileLockOptions,
): Promise<boolean> {
  const claim = `${path}.break`
  const claimToken = await newToken()
  // A directory this process may not write: it cannot break the lock, and waits (then times out) as before.
  const claimed = await createExclusive(claim, claimToken).catch(() => undefined)
  if (claimed === undefined) return false
  if (!claimed) {
    const other = await readFile(claim, 'utf8').catch(() => undefined)
    if (other === undefined) return true // its breaker has just finished
    if (!(await isStale(claim, other, isAlive))) return false
    await breakStaleClaim(claim, other)
    return true
  }
  try {
    // Under the claim no one else removes this file, and its holder is gone: if it still holds what
    // was judged stale, it is that stale file, and it stays so until it is removed here. Judged again:
    // an empty file may be a new holder's, created since and not written yet (then it is young).
    const again = await readFile(path, 'utf8').catch(() => undefined)
    if (again === stale && (await isStale(path, again, isAlive))) {
      await options.beforeBreak?.(stale)
      await unlink(path).catch(() => undefined)
    }
  } finally {
    await releaseOwn(claim, claimToken)
  }
  return true
}

/**
 * A claim left by a breaker that died holding it (a kill within its few milliseconds). It is moved
 * to a name of its own, which only one mover of that file can win; a moved claim that turns out to be
 * a live breaker's (the stale one was replaced between the read and the move) is put back, unless a
 * third one claimed meanwhile. That narrow case needs a breaker killed while breaking.
 */
async function breakStaleClaim(claim: string, stale: string): Promise<void> {
  const aside = `${claim}.${randomBytes(6).toString('hex')}`
  try {
    await rename(claim, aside)
  } catch {
    return // already moved by another waiter, or released
  }
  const moved = await readFile(aside, 'utf8').catch(() => undefined)
  if (moved !== stale) await link(aside, claim).catch(() => undefined)
  await unlink(aside).catch(() => undefined)
}
