// `fleetkit node check NODE`: queue a `checks` job for the node's agent and wait for its
// result, reporting progress; the result is read with the wire contract's reader, never guessed.
import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Clock } from '../../config/clock.js'
import { readJobFailure } from '../../protocol/agent-routes.js'
import { type CheckResult, readChecksJobResult } from '../../protocol/check-result.js'
import { WireFormatError, printableText } from '../../protocol/wire-format.js'
import { hasAgentCertificate } from '../../store/pki/certificates.js'
import type { Queryable } from '../../store/database.js'
import { createJob, getJob, withdrawQueuedJob, type JobRow } from '../../store/scheduling/jobs.js'
import { getNode } from '../../store/nodes/nodes.js'
import { sleepUnlessAborted } from '../../config/abortable-sleep.js'
import { isReturningLost, unknownNode } from './node-transition.js'

export interface NodeCheckResult {
  /** @minLength 1 */
  nodeId: string
  /** @format uuid */
  jobId: string
  status: 'succeeded'
  /**
   * @minimum 1
   * @asType integer
   */
  attempts: number
  /** @minItems 1 */
  checks: CheckResult[]
  /** The checks counted by status; a not-applicable check is neither passed nor failed. */
  counts: CheckCounts
  /** @format date-time */
  queuedAt: string
  /** @format date-time */
  finishedAt: string
}

interface CheckCounts {
  /**
   * @minimum 0
   * @asType integer
   */
  pass: number
  /**
   * @minimum 0
   * @asType integer
   */
  warn: number
  /**
   * @minimum 0
   * @asType integer
   */
  fail: number
  /**
   * @minimum 0
   * @asType integer
   */
  notApplicable: number
}

/** The checks counted by status: not_applicable is a count of its own, never a pass or a fail. */
function countChecks(checks: readonly CheckResult[]): CheckCounts {
  const counts: CheckCounts = { pass: 0, warn: 0, fail: 0, notApplicable: 0 }
  for (const c of checks) {
    if (c.status === 'not_applicable') counts.notApplicable += 1
    else counts[c.status] += 1
  }
  return counts
}

/** One line for a person: how many checks ran, how many failed, how many did not apply. */
export function summariseChecks(nodeId: string, checks: readonly CheckResult[]): string {
  const counts = countChecks(checks)
  const applied = checks.length - counts.notApplicable
  const failed = counts.fail === 0 ? 'none failed' : `${counts.fail} failed`
  const warned = counts.warn === 0 ? '' : `, ${counts.warn} warning`
  const na = counts.notApplicable === 0 ? '' : `; ${counts.notApplicable} not applicable`
  return `${nodeId}: ${applied} checks, ${failed}${warned}${na}`
}

interface NodeCheckProgress {
  jobId: string
  status: JobRow['status']
  attempts: number
  waitedSeconds: number
}

export interface NodeCheckOptions {
  pool: Queryable
  nodeId: string
  timeoutSeconds: number
  clock: Clock
  pollMs?: number
  /** Waits between polls; must return early when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>
  onProgress?: (progress: NodeCheckProgress) => void
  /** Aborted by Ctrl-C or SIGTERM: the queued job is withdrawn and NODE_CHECK_INTERRUPTED thrown. */
  signal?: AbortSignal
}

export async function runNodeCheck(options: NodeCheckOptions): Promise<NodeCheckResult> {
  const { pool, nodeId, clock } = options
  const signal = options.signal ?? new AbortController().signal
  const sleep = options.sleep ?? sleepUnlessAborted
  const shownId = JSON.stringify(nodeId.slice(0, 64))
  const node = await getNode(pool, nodeId)
  if (!node) throw await unknownNode(pool, nodeId)
  // Only an enrolled agent can lease the job: waiting for one that cannot would end in a timeout that explains nothing.
  const enrolled = await hasAgentCertificate(pool, nodeId)
  if (!enrolled || node.status === 'provisioning') {
    const why = enrolled
      ? 'is waiting to enroll again (status provisioning)'
      : `has never enrolled (status ${node.status})`
    throw new FleetkitError('NODE_NOT_ENROLLED', `the agent of ${shownId} ${why}: no agent can take a checks job`, {
      actions: [
        `fleetkit node token ${nodeId}`,
        'fleetkit-agent enroll (on the host, with the secret in its secret file)',
      ],
      data: { nodeId, nodeStatus: node.status },
    })
  }
  // The gateway leases only to an active node (an unhealthy one is active again at its next request).
  if (!LEASING.includes(node.status)) throw cannotLease(node.id, node.status, isReturningLost(node))
  if (signal.aborted) throw interrupted(nodeId, undefined, false)
  const queuedAt = clock.now()
  const job = await createJob(pool, { nodeId, kind: 'checks', payload: {}, now: queuedAt })
  const deadline = queuedAt.getTime() + options.timeoutSeconds * 1000
  let last = ''
  for (;;) {
    if (signal.aborted) {
      const withdrawn = await withdrawQueuedJob(pool, job.id, 'interrupted', clock.now())
      throw interrupted(nodeId, job.id, withdrawn)
    }
    const current = (await getJob(pool, job.id))!
    const now = clock.now()
    const key = `${current.status}:${current.attempts}`
    if (key !== last) {
      last = key
      options.onProgress?.({
        jobId: job.id,
        status: current.status,
        attempts: current.attempts,
        waitedSeconds: Math.round((now.getTime() - queuedAt.getTime()) / 1000),
      })
    }
    if (current.status === 'succeeded' || current.status === 'failed') return finish(nodeId, current, queuedAt)
    if (now.getTime() >= deadline) {
      const withdrawn = await withdrawQueuedJob(pool, job.id, 'timed_out', now)
      throw new FleetkitError(
        'NODE_CHECK_TIMEOUT',
        `no result from ${nodeId} within ${options.timeoutSeconds} s (job ${current.status}${withdrawn ? ', withdrawn' : ', still leased'})`,
        {
          actions: [
            ...(current.status === 'queued'
              ? [
                  'fleetkit node show ' +
                    nodeId +
                    '   (is it heartbeating? no agent took the job: the gateway may be down)',
                ]
              : []),
            'fleetkit-agent doctor (on the host)',
            `fleetkit node check ${nodeId} --timeout ${Math.max(options.timeoutSeconds * 2, 60)}`,
          ],
          data: { nodeId, jobId: job.id, jobStatus: current.status, withdrawn, nodeStatus: node.status },
        },
      )
    }
    await sleep(options.pollMs ?? 500, signal)
  }
}

const LEASING: readonly string[] = ['active', 'unhealthy']

/** The node's agent is refused a lease in this status: the check would only time out. */
function cannotLease(nodeId: string, status: string, returning: boolean): FleetkitError {
  const next: Record<string, string> = {
    draining: `fleetkit node undrain ${nodeId}   (active again, not schedulable: its checks can run)`,
    parked: `fleetkit node unpark ${nodeId}`,
    lost: returning
      ? `fleetkit node undrain ${nodeId}   (it heartbeats again: active, not schedulable, so its checks can run)`
      : `fleetkit-agent doctor (on ${nodeId}); once it heartbeats, fleetkit node undrain ${nodeId} (to check it first) or fleetkit node admit ${nodeId}`,
    failed: `fleetkit node token ${nodeId} --reissue`,
  }
  return new FleetkitError(
    'NODE_STATE_CONFLICT',
    `cannot check ${nodeId}: it is ${status}, and the gateway leases jobs only to an active node (check applies to ${LEASING.join(', ')}); nothing was queued`,
    {
      actions: [`fleetkit node show ${nodeId}`, ...(next[status] ? [next[status]!] : [])],
      data: { nodeId, status, allowed: LEASING },
    },
  )
}

function interrupted(nodeId: string, jobId: string | undefined, withdrawn: boolean): FleetkitError {
  const what =
    jobId === undefined
      ? 'no job was queued'
      : withdrawn
        ? `job ${jobId} was withdrawn`
        : `job ${jobId} was already taken by the agent and is left to finish`
  return new FleetkitError('NODE_CHECK_INTERRUPTED', `interrupted while waiting for ${nodeId}: ${what}`, {
    actions: [`fleetkit node check ${nodeId}`],
    data: { nodeId, ...(jobId === undefined ? {} : { jobId }), withdrawn },
  })
}

function finish(nodeId: string, job: JobRow, queuedAt: Date): NodeCheckResult {
  if (job.status === 'failed') {
    throw new FleetkitError('NODE_CHECK_FAILED', `${nodeId}: the checks job failed (${failureReason(job.result)})`, {
      actions: ['fleetkit-agent doctor (on the host)'],
      data: { nodeId, jobId: job.id, jobStatus: job.status },
    })
  }
  const checks = readChecks(nodeId, job)
  const failed = checks.filter((c) => c.status === 'fail')
  if (failed.length > 0) {
    throw new FleetkitError(
      'NODE_CHECK_FAILED',
      `${nodeId}: ${failed.length} of ${checks.length - countChecks(checks).notApplicable} checks failed: ${failed.map((c) => c.id).join(', ')}`,
      {
        actions: ['fleetkit checks', ...new Set(failed.flatMap((c) => (c.code ? [`fleetkit runbook ${c.code}`] : [])))],
        data: { nodeId, jobId: job.id, jobStatus: job.status, checks },
        detailLines: checks.map(formatCheck),
      },
    )
  }
  return {
    nodeId,
    jobId: job.id,
    status: 'succeeded',
    attempts: job.attempts,
    checks,
    counts: countChecks(checks),
    queuedAt: queuedAt.toISOString(),
    finishedAt: job.updatedAt.toISOString(),
  }
}

/** The stored result read with the contract's reader: what cannot be read fails, it is never shown as "0 checks". */
function readChecks(nodeId: string, job: JobRow): CheckResult[] {
  try {
    return readChecksJobResult(job.result).checks
  } catch (error) {
    if (!(error instanceof WireFormatError)) throw error
    throw new FleetkitError(
      'NODE_CHECK_RESULT_INVALID',
      `${nodeId}: the agent's checks result cannot be read (${error.message})`,
      {
        actions: [
          "fleetkit-agent --version (on the host): upgrade the agent to this fleetkit's version",
          'fleetkit-agent doctor (on the host)',
        ],
        data: { nodeId, jobId: job.id, jobStatus: job.status, field: error.path },
      },
    )
  }
}

/** Why a failed job failed: the agent's {error: {code, message}}, or the gateway's or this command's own reason. */
function failureReason(result: Record<string, unknown> | null): string {
  const error = result?.error
  if (typeof error === 'string') return printableText(error, 64)
  try {
    const { code, message } = readJobFailure(result).error
    return message === '' ? code : `${code}: ${message}`
  } catch {
    return 'no readable reason given'
  }
}

const STATUS_LABELS: Record<CheckResult['status'], string> = {
  pass: 'PASS',
  warn: 'WARN',
  fail: 'FAIL',
  not_applicable: 'N/A ',
}

/** One line per check; every part is already printable (the reader stripped control characters). */
export function formatCheck(c: CheckResult): string {
  return `${STATUS_LABELS[c.status]}  ${c.id.padEnd(22)} ${c.code ?? '-'}${c.detail ? `  ${c.detail}` : ''}`
}
