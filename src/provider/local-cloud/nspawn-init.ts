// A systemd-nspawn container's PID 1 found from the nspawn process: the local cloud's machines and the
// test suites' container hosts (test/hosts/container.ts) both need it to enter the container's namespaces.
import { readdirSync, readFileSync } from 'node:fs'

/** A container's PID 1 as this machine sees it: the descendant of nspawn whose innermost PID is 1. */
export function findInit(nspawnPid: number): number | undefined {
  const queue = [nspawnPid]
  while (queue.length > 0) {
    const pid = queue.shift()!
    let status: string
    try {
      status = readFileSync(`/proc/${pid}/status`, 'utf8')
    } catch {
      continue
    }
    const nspid = /^NSpid:\s+(.+)$/m.exec(status)?.[1]?.trim().split(/\s+/) ?? []
    if (pid !== nspawnPid && nspid.length > 1 && nspid.at(-1) === '1') return pid
    for (const task of readdirOrNone(`/proc/${pid}/task`)) {
      try {
        const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim()
        queue.push(...children.split(/\s+/).filter(Boolean).map(Number))
      } catch {
        /* the task ended */
      }
    }
  }
  return undefined
}

/** The names in `dir`, none when it cannot be read (a process that ended while it was looked at). */
export function readdirOrNone(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}
