// Waiting, synchronously, for a killed process group to be gone: an interrupt handler that ends
// initdb's group must not let this process exit while initdb still writes (SIGKILL is delivered
// when a process next runs, which on a loaded machine is not at once).
import { readdirSync, readFileSync } from 'node:fs'

const pause = new Int32Array(new SharedArrayBuffer(4))

/** Whether a process other than a zombie is still in process group `pgid` (Linux /proc). */
export function processGroupAlive(pgid: number): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue // ended while we looked
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so read after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true
  }
  return false
}

/**
 * Whether group `pgid` still holds processes its (reaped) leader left behind: live members, none of
 * them a process whose own PID is `pgid`. After the leader is reaped its PID may be given to a new
 * process, which then leads a group of that number: that group is a stranger's, never ours to signal.
 */
export function leftoverGroupMembers(pgid: number): boolean {
  let members = false
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(fields[2]) !== pgid || fields[0] === 'Z' || fields[0] === 'X') continue
    if (Number(entry) === pgid) return false
    members = true
  }
  return members
}

/** Blocks until group `pgid` has no live process, or `timeoutMs` passed; whether it is gone. */
export function waitForProcessGroupEndSync(pgid: number, timeoutMs: number): boolean {
  const deadline = Date.now() + timeoutMs
  while (processGroupAlive(pgid)) {
    if (Date.now() >= deadline) return false
    Atomics.wait(pause, 0, 0, 20)
  }
  return true
}
