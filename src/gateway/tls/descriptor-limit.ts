// The gateway's descriptor budget at start: both listeners' connection caps plus a reserve (the
// database pool, the PKI reload's file reads, workers, logs) must fit under the soft RLIMIT_NOFILE,
// or a flood of idle connections makes heartbeats 503 and the PKI reload fail (EMFILE) instead of
// being refused at the caps. The soft limit is raised to the hard one first; below the budget the
// gateway refuses to start, naming the numbers.
//
// Node has no setrlimit. It raises its own soft limit to the hard one at start (so the raise here is
// usually a no-op); where it did not, `prlimit --pid PID --nofile=H:H` (util-linux, essential on
// Debian and Ubuntu) raises it: any process may raise its soft limit up to its hard one.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Logger } from '../../log/logger.js'

export interface OpenFilesLimit {
  soft: number
  hard: number
}

export interface DescriptorBudget {
  enrollConnections: number
  agentConnections: number
  reserve: number
}

export interface DescriptorLimitDeps {
  /** The current limit (default: /proc/self/limits); undefined where it cannot be read (not Linux). */
  read?: () => OpenFilesLimit | undefined
  /** Raise the soft limit to `to` (default: prlimit on this process); throws when it could not. */
  raise?: (to: number) => void
  logger: Logger
}

/** "Max open files  1024  524288  files": Infinity for "unlimited". */
export function parseOpenFilesLimit(limitsText: string): OpenFilesLimit | undefined {
  const match = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(limitsText)
  if (!match) return undefined
  const value = (text: string) => (text === 'unlimited' ? Infinity : Number(text))
  return { soft: value(match[1]!), hard: value(match[2]!) }
}

function descriptorsNeeded(budget: DescriptorBudget): number {
  return budget.enrollConnections + budget.agentConnections + budget.reserve
}

/**
 * Raises the soft limit to the hard one and checks the budget fits; returns the limit now in force
 * (undefined when it cannot be read). Throws GATEWAY_DESCRIPTOR_LIMIT when the budget does not fit.
 */
export function ensureDescriptorBudget(
  budget: DescriptorBudget,
  deps: DescriptorLimitDeps,
): OpenFilesLimit | undefined {
  const read = deps.read ?? readOwnLimit
  const raise = deps.raise ?? raiseWithPrlimit
  const before = read()
  if (!before) {
    deps.logger('warn', 'descriptor_limit_unknown', { reason: 'cannot read /proc/self/limits' })
    return undefined
  }
  let limit = before
  if (before.soft < before.hard && Number.isFinite(before.hard)) {
    try {
      raise(before.hard)
      limit = read() ?? before
      deps.logger('info', 'descriptor_limit_raised', { from: before.soft, to: limit.soft })
    } catch (error) {
      deps.logger('warn', 'descriptor_limit_not_raised', {
        soft: before.soft,
        hard: before.hard,
        error: (error as Error).message,
      })
    }
  }
  const needed = descriptorsNeeded(budget)
  if (limit.soft < needed) {
    throw new FleetkitError(
      'GATEWAY_DESCRIPTOR_LIMIT',
      `the gateway needs ${needed} open files (${budget.enrollConnections} enrollment + ${budget.agentConnections} agent connections + ${budget.reserve} kept for the database pool and PKI files) but its limit is ${limit.soft} (hard ${limit.hard})`,
      {
        actions: [
          `raise the limit to at least ${needed}: LimitNOFILE= in the systemd unit (systemd/fleetkit-gateway.service sets 65536), or ulimit -n`,
          'or lower FLEETKIT_AGENT_MAX_CONNECTIONS or FLEETKIT_ENROLL_MAX_CONNECTIONS',
        ],
        data: {
          needed,
          soft_limit: limit.soft,
          hard_limit: limit.hard,
          enroll_connections: budget.enrollConnections,
          agent_connections: budget.agentConnections,
          reserve: budget.reserve,
        },
      },
    )
  }
  deps.logger('info', 'descriptor_budget', { limit: limit.soft, needed, ...budget })
  return limit
}

function readOwnLimit(): OpenFilesLimit | undefined {
  try {
    return parseOpenFilesLimit(readFileSync('/proc/self/limits', 'utf8'))
  } catch {
    return undefined
  }
}

function raiseWithPrlimit(to: number): void {
  const result = spawnSync('prlimit', ['--pid', String(process.pid), `--nofile=${to}:${to}`], {
    encoding: 'utf8',
    timeout: 5000,
  })
  if (result.error) throw result.error
  if (result.status !== 0) throw new Error(`prlimit exited with ${result.status}: ${result.stderr.trim()}`)
}
