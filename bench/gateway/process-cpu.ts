// CPU time of another process (all its threads), read from /proc/PID/stat: the ratio bench divides
// it by the requests answered, which says what a request costs a server whatever else shares the cores.
import { readFileSync } from 'node:fs'

const TICKS_PER_SECOND = 100

/** utime + stime of `pid` in microseconds, or undefined where /proc is not readable (not Linux). */
export function processCpuMicros(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND
  } catch {
    return undefined
  }
}
