// `fleetkit node check NODE`: queue a `checks` job for the node's agent and wait for its
// result, reporting progress; the result lists each check ID with its status and code.
import { CHECK_ID_PATTERN } from '../checks/check-ids.js'
import { FleetkitError } from '../checks/fleetkit-error.js'
import type { Clock } from '../config/clock.js'
import type { Queryable } from '../store/database.js'
import { createJob, getJob, withdrawQueuedJob, type JobRow } from '../store/jobs.js'
import { getNode } from '../store/nodes.js'

export interface CheckOutcome {
  id: string
  status: 'pass' | 'fail' | 'warn'
  code?: string
  detail?: string
}

export interface NodeCheckResult {
  nodeId: string
  jobId: string
  status: 'succeeded'
  attempts: number
  checks: CheckOutcome[]
  queuedAt: string
  finishedAt: string
}

export interface NodeCheckProgress {
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
  sleep?: (ms: number) => Promise<void>
  onProgress?: (progress: NodeCheckProgress) => void
}

const CHECK_STATUSES = new Set(['pass', 'fail', 'warn'])

export async function runNodeCheck(options: NodeCheckOptions): Promise<NodeCheckResult> {
  const { pool, nodeId, clock } = options
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  const node = await getNode(pool, nodeId)
  if (!node) {
    throw new FleetkitError('NODE_UNKNOWN', `no node ${JSON.stringify(nodeId.slice(0, 64))} in the state database`, { actions: ['fleetkit db status'] })
  }
  const queuedAt = clock.now()
  const job = await createJob(pool, { nodeId, kind: 'checks', payload: {}, now: queuedAt })
  const deadline = queuedAt.getTime() + options.timeoutSeconds * 1000
  let last = ''
  for (;;) {
    const current = (await getJob(pool, job.id))!
    const now = clock.now()
    const key = `${current.status}:${current.attempts}`
    if (key !== last) {
      last = key
      options.onProgress?.({ jobId: job.id, status: current.status, attempts: current.attempts, waitedSeconds: Math.round((now.getTime() - queuedAt.getTime()) / 1000) })
    }
    if (current.status === 'succeeded' || current.status === 'failed') return finish(nodeId, current, queuedAt)
    if (now.getTime() >= deadline) {
      const withdrawn = await withdrawQueuedJob(pool, job.id, 'timed_out', now)
      throw new FleetkitError('NODE_CHECK_TIMEOUT', `no result from ${nodeId} within ${options.timeoutSeconds} s (job ${current.status}${withdrawn ? ', withdrawn' : ', still leased'})`, {
        actions: ['fleetkit-agent doctor (on the host)', `fleetkit node check ${nodeId} --timeout ${Math.max(options.timeoutSeconds * 2, 60)}`],
        data: { nodeId, jobId: job.id, jobStatus: current.status, withdrawn, nodeStatus: node.status },
      })
    }
    await sleep(options.pollMs ?? 500)
  }
}

function finish(nodeId: string, job: JobRow, queuedAt: Date): NodeCheckResult {
  const checks = parseChecks(job.result)
  const failed = checks.filter((c) => c.status === 'fail')
  if (job.status === 'failed' || failed.length > 0) {
    const reason = job.status === 'failed' ? `the checks job failed (${String(job.result?.error ?? 'no reason given')})` : `${failed.length} of ${checks.length} checks failed: ${failed.map((c) => c.id).join(', ')}`
    throw new FleetkitError('NODE_CHECK_FAILED', `${nodeId}: ${reason}`, {
      actions: ['fleetkit checks', ...failed.filter((c) => c.code).map((c) => `fleetkit runbook ${c.code}`)],
      data: { nodeId, jobId: job.id, jobStatus: job.status, checks },
      detailLines: checks.map(formatCheck),
    })
  }
  return { nodeId, jobId: job.id, status: 'succeeded', attempts: job.attempts, checks, queuedAt: queuedAt.toISOString(), finishedAt: job.updatedAt.toISOString() }
}

/** The agent's result, kept only where it has the contract's shape (anything else is dropped). */
export function parseChecks(result: Record<string, unknown> | null): CheckOutcome[] {
  const raw = Array.isArray(result?.checks) ? (result!.checks as unknown[]) : []
  const out: CheckOutcome[] = []
  for (const item of raw.slice(0, 200)) {
    if (item === null || typeof item !== 'object') continue
    const c = item as Record<string, unknown>
    if (typeof c.id !== 'string' || !CHECK_ID_PATTERN.test(c.id) || typeof c.status !== 'string' || !CHECK_STATUSES.has(c.status)) continue
    out.push({
      id: c.id,
      status: c.status as CheckOutcome['status'],
      ...(typeof c.code === 'string' ? { code: c.code.slice(0, 64) } : {}),
      ...(typeof c.detail === 'string' ? { detail: c.detail.slice(0, 500) } : {}),
    })
  }
  return out
}

export function formatCheck(c: CheckOutcome): string {
  return `${c.status.toUpperCase().padEnd(4)}  ${c.id.padEnd(22)} ${c.code ?? '-'}${c.detail ? `  ${c.detail}` : ''}`
}
