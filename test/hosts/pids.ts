// Whether a process still runs (a zombie does not count: it holds nothing), and a synchronous
// wait for processes to end, for the exit handler that cannot await.
import { readFileSync } from 'node:fs'

export function alive(pid: number): boolean {
  if (!pid) return false
  try {
    process.kill(pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  try {
    return !/^State:\s+[ZX]/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))
  } catch {
    return false
  }
}

/** Blocks until none of PIDS runs or `timeoutMs` passed; true when they all ended. */
export function waitForExitSync(pids: number[], timeoutMs = 5_000): boolean {
  const cell = new Int32Array(new SharedArrayBuffer(4))
  const deadline = Date.now() + timeoutMs
  while (pids.some(alive)) {
    if (Date.now() >= deadline) return false
    Atomics.wait(cell, 0, 0, 50)
  }
  return true
}
