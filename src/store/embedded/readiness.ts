// Waiting on the embedded server's process: until postmaster.pid says it is ready, or until
// it is gone. Polls the files PostgreSQL itself writes; there is no event to wait on.
import { processIsAlive } from '../../fs/file-lock.js'
import { type PostmasterPid, readPostmasterPid } from './postmaster.js'

/** The server `pid` once its postmaster.pid says ready; undefined when it exits or the time is up. */
export async function waitUntilReady(
  dataDir: string,
  pid: number,
  hasExited: (() => boolean) | undefined,
  timeoutMs: number,
): Promise<PostmasterPid | undefined> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const pm = await readPostmasterPid(dataDir)
    if (pm?.pid === pid && pm.status === 'ready') return pm
    if (hasExited?.() || !processIsAlive(pid)) return undefined
    await sleep(50)
  }
  return undefined
}

/** True once `pid` is gone, false when it still runs at the deadline. */
export async function waitUntilGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (processIsAlive(pid)) {
    if (Date.now() > deadline) return false
    await sleep(50)
  }
  return true
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
