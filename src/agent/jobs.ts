// Runs one leased job: `checks` runs the host check suite; job heartbeats keep the
// lease alive while it runs; the result is completed with the lease token.
import type { FleetkitError } from '../checks/fleetkit-error.js'
import { systemRng, type Rng, unitInterval } from '../config/rng.js'
import {
  AGENT_PATHS,
  errorCodeOf,
  type JobCompleteRequest,
  type JobHeartbeatRequest,
  type LeasedJob,
  jobPath,
  readJobHeartbeatResponse,
} from '../protocol/agent-routes.js'
import { type CheckResult, readChecksJobResult } from '../protocol/check-result.js'
import { readResponse } from '../protocol/read.js'
import { WireFormatError } from '../protocol/wire-format.js'
import type { CheckContext } from './host-checks.js'
import { runHostChecks } from './host-checks.js'
import type { Logger } from '../log/logger.js'
import type { AgentSession } from './session.js'
import { type BackoffPolicy, isRetryLaterStatus, nextBackoffMs, retryAfterHeaderMs } from './backoff.js'
import type { GatewayResponse } from './gateway-client.js'

export interface JobRunDeps {
  log: Logger
  now: () => Date
  checkContext: () => CheckContext
  /** Set when the gateway fences the job away (a lost node's cleanup list): stop, do not complete. */
  abandoned: () => boolean
  runChecks?: (ctx: CheckContext) => Promise<CheckResult[]>
  /** Ends the completion retries (the agent is stopping). */
  signal?: AbortSignal
  /** Waits between completion attempts; tests pass one that returns at once. */
  sleep?: (ms: number) => Promise<void>
  rng?: Rng
}

/** Completion retries wait Retry-After (or this backoff) plus jitter, up to a minute. */
const COMPLETE_RETRY: BackoffPolicy = { baseMs: 1000, capMs: 60_000 }

export type JobOutcome = 'succeeded' | 'failed' | 'abandoned' | 'lease_conflict'

/** Job heartbeats at a third of the lease left, between 1 s and 30 s. */
export function jobHeartbeatIntervalMs(now: Date, leaseExpiresAt: string): number {
  const left = Date.parse(leaseExpiresAt) - now.getTime()
  if (Number.isNaN(left)) return 10_000
  return Math.min(Math.max(Math.floor(left / 3), 1000), 30_000)
}

export async function runJob(session: AgentSession, job: LeasedJob, deps: JobRunDeps): Promise<JobOutcome> {
  deps.log('info', 'job_started', { job_id: job.id, kind: job.kind })
  let leaseExpiresAt = job.lease_expires_at
  let conflict = false
  let timer: NodeJS.Timeout | undefined
  const beat = async () => {
    try {
      const request: JobHeartbeatRequest = { lease_token: job.lease_token }
      const response = await session.call('POST', jobPath(AGENT_PATHS.jobHeartbeat, job.id), request)
      if (response.status === 409) conflict = true
      else if (response.status === 200)
        leaseExpiresAt = readResponse(
          readJobHeartbeatResponse,
          response.body,
          AGENT_PATHS.jobHeartbeat,
        ).lease_expires_at
      deps.log('debug', 'job_heartbeat', { job_id: job.id, status: response.status })
    } catch (error) {
      deps.log('warn', 'job_heartbeat_failed', {
        job_id: job.id,
        code: (error as FleetkitError).code ?? 'UNKNOWN',
        message: (error as Error).message,
      })
    }
    if (!conflict) timer = setTimeout(() => void beat(), jobHeartbeatIntervalMs(deps.now(), leaseExpiresAt))
  }
  timer = setTimeout(() => void beat(), jobHeartbeatIntervalMs(deps.now(), leaseExpiresAt))

  const leaseToken = job.lease_token
  let request: JobCompleteRequest
  try {
    if (job.kind === 'checks') {
      // Held to the contract here too: the gateway refuses a result it cannot read, and a refused completion would leave the job to time out.
      const result = readChecksJobResult({ checks: await (deps.runChecks ?? runHostChecks)(deps.checkContext()) })
      request = { lease_token: leaseToken, status: 'succeeded', result }
    } else {
      request = {
        lease_token: leaseToken,
        status: 'failed',
        result: {
          error: {
            code: 'job_kind_unknown',
            message: `this agent does not run ${JSON.stringify(job.kind).slice(0, 64)} jobs`,
          },
        },
      }
    }
  } catch (error) {
    const code = error instanceof WireFormatError ? 'result_invalid' : 'job_error'
    request = {
      lease_token: leaseToken,
      status: 'failed',
      result: { error: { code, message: (error as Error).message.slice(0, 500) } },
    }
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
  const { status } = request
  const response = await completeWithRetries(session, job.id, request, deps)
  if (response === undefined) return 'abandoned'
  if (response.status === 409) {
    deps.log('warn', 'job_lease_conflict', { job_id: job.id })
    return 'lease_conflict'
  }
  deps.log('info', 'job_completed', { job_id: job.id, kind: job.kind, status, http_status: response.status })
  return status
}

/**
 * POST the completion until the gateway answers something other than "later": a 5xx, a 429 or
 * no answer at all keeps the result in memory and tries again (Retry-After, else a jittered
 * backoff). A result that reached no gateway is never dropped while the agent runs; once the lease
 * lapses the gateway answers 409 and the job is retried elsewhere. Undefined: the agent stopped first.
 */
async function completeWithRetries(
  session: AgentSession,
  jobId: string,
  request: JobCompleteRequest,
  deps: JobRunDeps,
): Promise<GatewayResponse | undefined> {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  const rng = deps.rng ?? systemRng
  let previousMs = 0
  for (let attempt = 1; ; attempt++) {
    let response: GatewayResponse | undefined
    let failure: { code: string; message: string } | undefined
    try {
      response = await session.call('POST', jobPath(AGENT_PATHS.jobComplete, jobId), request)
    } catch (error) {
      const e = error as FleetkitError
      // A refused certificate cannot be retried into success: the run loop exits on it.
      if (!RETRYABLE_CODES.has(e.code)) throw error
      failure = { code: e.code, message: e.message }
    }
    if (response && !isRetryLaterStatus(response.status)) return response
    previousMs = nextBackoffMs(previousMs, COMPLETE_RETRY, rng)
    const askedMs = response
      ? (retryAfterHeaderMs(response.headers['retry-after'], deps.now().getTime(), COMPLETE_RETRY.capMs) ?? 0)
      : 0
    const waitMs = Math.max(askedMs + Math.round(unitInterval(rng) * COMPLETE_RETRY.baseMs), previousMs)
    deps.log('warn', 'job_completion_retry', {
      job_id: jobId,
      attempt,
      retry_in_ms: waitMs,
      ...(response
        ? { http_status: response.status, code: errorCodeOf(response.body) ?? null }
        : { code: failure!.code, message: failure!.message }),
    })
    if (deps.signal?.aborted) break
    await sleep(waitMs)
    if (deps.signal?.aborted) break
  }
  deps.log('warn', 'job_completion_unsent', {
    job_id: jobId,
    reason: 'the agent is stopping; the lease lapses and the job is retried',
  })
  return undefined
}

/** Transport failures worth another attempt (see session.call). */
const RETRYABLE_CODES = new Set(['GATEWAY_UNREACHABLE', 'CLOCK_SKEW'])
