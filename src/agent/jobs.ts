// Runs one leased job: `checks` runs the host check suite; job heartbeats keep the
// lease alive while it runs; the result is completed with the lease token.
import type { FleetkitError } from '../checks/fleetkit-error.js'
import type { CheckContext, CheckResult } from './host-checks.js'
import { runHostChecks } from './host-checks.js'
import type { Logger } from '../log/logger.js'
import type { AgentSession } from './session.js'

export interface LeasedJob {
  id: string | number
  kind: string
  payload: unknown
  lease_token: string
  lease_expires_at: string
}

export interface JobRunDeps {
  log: Logger
  now: () => Date
  checkContext: () => CheckContext
  /** Set when the gateway fences the job away (a lost node's cleanup list): stop, do not complete. */
  abandoned: () => boolean
  runChecks?: (ctx: CheckContext) => Promise<CheckResult[]>
}

export type JobOutcome = 'succeeded' | 'failed' | 'abandoned' | 'lease_conflict'

/** Job heartbeats at a third of the lease left, between 1 s and 30 s. */
export function jobHeartbeatIntervalMs(now: Date, leaseExpiresAt: string): number {
  const left = Date.parse(leaseExpiresAt) - now.getTime()
  if (Number.isNaN(left)) return 10_000
  return Math.min(Math.max(Math.floor(left / 3), 1000), 30_000)
}

export async function runJob(session: AgentSession, job: LeasedJob, deps: JobRunDeps): Promise<JobOutcome> {
  const jobPath = `/v1/agent/jobs/${encodeURIComponent(String(job.id))}`
  deps.log('info', 'job_started', { job_id: job.id, kind: job.kind })
  let leaseExpiresAt = job.lease_expires_at
  let conflict = false
  let timer: NodeJS.Timeout | undefined
  const beat = async () => {
    try {
      const response = await session.call<{ lease_expires_at?: string }>('POST', `${jobPath}/heartbeat`, { lease_token: job.lease_token })
      if (response.status === 409) conflict = true
      else if (typeof response.body.lease_expires_at === 'string') leaseExpiresAt = response.body.lease_expires_at
      deps.log('debug', 'job_heartbeat', { job_id: job.id, status: response.status })
    } catch (error) {
      deps.log('warn', 'job_heartbeat_failed', { job_id: job.id, code: (error as FleetkitError).code ?? 'UNKNOWN', message: (error as Error).message })
    }
    if (!conflict) timer = setTimeout(() => void beat(), jobHeartbeatIntervalMs(deps.now(), leaseExpiresAt))
  }
  timer = setTimeout(() => void beat(), jobHeartbeatIntervalMs(deps.now(), leaseExpiresAt))

  let status: 'succeeded' | 'failed'
  let result: Record<string, unknown>
  try {
    if (job.kind === 'checks') {
      const checks = await (deps.runChecks ?? runHostChecks)(deps.checkContext())
      status = 'succeeded'
      result = { checks }
    } else {
      status = 'failed'
      result = { error: { code: 'job_kind_unknown', message: `this agent does not run ${JSON.stringify(job.kind).slice(0, 64)} jobs` } }
    }
  } catch (error) {
    status = 'failed'
    result = { error: { code: 'job_error', message: (error as Error).message.slice(0, 500) } }
  } finally {
    clearTimeout(timer)
  }
  if (deps.abandoned()) {
    deps.log('warn', 'job_abandoned', { job_id: job.id })
    return 'abandoned'
  }
  if (conflict) {
    deps.log('warn', 'job_lease_conflict', { job_id: job.id })
    return 'lease_conflict'
  }
  const response = await session.call('POST', `${jobPath}/complete`, { lease_token: job.lease_token, status, result })
  if (response.status === 409) {
    deps.log('warn', 'job_lease_conflict', { job_id: job.id })
    return 'lease_conflict'
  }
  deps.log('info', 'job_completed', { job_id: job.id, kind: job.kind, status, http_status: response.status })
  return status
}
