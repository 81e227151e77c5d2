// CPU time of another process (all its threads), read from /proc/PID/stat: the ratio bench divides
// it by the requests answered, which says what a request costs a server whatever else shares the cores.
import { readdirSync, readFileSync } from 'node:fs'

const TICKS_PER_SECOND = 100

/** The fields of /proc/PID/stat after the command name (which may hold spaces): index 0 is field 3. */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

const ticksToMicros = (ticks: number) => (ticks * 1e6) / TICKS_PER_SECOND

/** utime + stime of `pid` in microseconds, or undefined where /proc is not readable (not Linux). */
export function processCpuMicros(pid: number | undefined): number | undefined {
  const fields = pid === undefined ? undefined : statFields(pid)
  return fields ? ticksToMicros(Number(fields[11]) + Number(fields[12])) : undefined
}

/**
 * CPU time of `pid` and its children in microseconds: its own, its live children's, and what its
 * exited children left it (cutime + cstime). PostgreSQL's backends are the postmaster's children.
 */
export function processTreeCpuMicros(pid: number | undefined): number | undefined {
  const root = pid === undefined ? undefined : statFields(pid)
  if (!root) return undefined
  let ticks = Number(root[11]) + Number(root[12]) + Number(root[13]) + Number(root[14])
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const fields = statFields(entry)
    if (fields && Number(fields[1]) === pid) ticks += Number(fields[11]) + Number(fields[12])
  }
  return ticksToMicros(ticks)
}
