// A cross-process lock on one file, created with O_EXCL and holding the owner's PID so a dead owner's
// lock is broken. In src/fs because the PKI writers need it too, and src/pki may not touch the store.
import { readFile, stat, unlink, writeFile } from 'node:fs/promises'

export interface FileLockOptions {
  timeoutMs?: number
  pollMs?: number
  /** Whether a PID is a live process; injectable for tests. */
  isAlive?: (pid: number) => boolean
  /** Called once, when the lock is first seen held by a live process: a caller says what it waits for. */
  onWait?: (holder: number) => void
}

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

export class LockTimeoutError extends Error {
  constructor(
    readonly path: string,
    readonly holder: number | undefined,
  ) {
    super(`timed out waiting for the lock ${path}${holder ? ` held by PID ${holder}` : ''}`)
    this.name = 'LockTimeoutError'
  }
}

/** Run `fn` while holding the lock file `path`; the lock is removed afterwards, also on error. */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const token = await acquire(path, options)
  try {
    return await fn()
  } finally {
    // Remove only our own lock: a lock broken as stale and taken by another stays theirs.
    const content = await readFile(path, 'utf8').catch(() => '')
    if (content === token) await unlink(path).catch(() => undefined)
  }
}

async function acquire(path: string, options: FileLockOptions): Promise<string> {
  const timeoutMs = options.timeoutMs ?? 120_000
  const pollMs = options.pollMs ?? 50
  const isAlive = options.isAlive ?? processIsAlive
  const token = `${process.pid} ${Date.now()} ${Math.random().toString(36).slice(2)}\n`
  const deadline = Date.now() + timeoutMs
  let told = false
  for (;;) {
    try {
      await writeFile(path, token, { flag: 'wx', mode: 0o600 })
      return token
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error
    }
    const held = await readFile(path, 'utf8').catch(() => undefined)
    if (held === undefined) continue // released between our attempt and our read
    const holder = Number.parseInt(held.split(' ')[0] ?? '', 10)
    // An empty or half-written file is a holder that is still writing it: wait, unless it is old.
    if (Number.isInteger(holder) && holder > 0 && !isAlive(holder)) {
      const again = await readFile(path, 'utf8').catch(() => undefined)
      if (again === held) await unlink(path).catch(() => undefined)
      continue
    }
    if (!Number.isInteger(holder) || holder <= 0) {
      // A creator that died between creating the file and writing its PID.
      const age = await stat(path)
        .then((s) => Date.now() - s.mtimeMs)
        .catch(() => 0)
      if (age > 5_000) {
        const again = await readFile(path, 'utf8').catch(() => undefined)
        if (again === held) await unlink(path).catch(() => undefined)
        continue
      }
    }
    if (!told && Number.isInteger(holder) && holder > 0) {
      told = true
      options.onWait?.(holder)
    }
    if (Date.now() > deadline) throw new LockTimeoutError(path, Number.isInteger(holder) ? holder : undefined)
    await new Promise((resolve) => setTimeout(resolve, pollMs))
  }
}
