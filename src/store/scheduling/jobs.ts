// Jobs the gateway leases to agents: one node each, a random lease token of which only
// the SHA-256 is stored, conditional updates so a stale token or fenced node writes nothing.
import type { Queryable } from '../database.js'

export type JobStatus = 'queued' | 'leased' | 'succeeded' | 'failed'

export interface JobRow {
  id: string
  nodeId: string
  kind: string
  payload: Record<string, unknown>
  status: JobStatus
  leaseExpiresAt: Date | null
  attempts: number
  maxAttempts: number
  result: Record<string, unknown> | null
  createdAt: Date
  updatedAt: Date
}

/** Node statuses whose agents may still heartbeat and complete jobs they hold. */
const JOB_HOLDER_STATUSES = ['active', 'draining', 'unhealthy'] as const

const COLUMNS =
  'id::text AS id, node_id, kind, payload, status, lease_expires_at, attempts, max_attempts, result, created_at, updated_at'

interface Row {
  id: string
  node_id: string
  kind: string
  payload: Record<string, unknown>
  status: JobStatus
  lease_expires_at: Date | null
  attempts: number
  max_attempts: number
  result: Record<string, unknown> | null
  created_at: Date
  updated_at: Date
}

function toJob(row: Row): JobRow {
  return {
    id: row.id,
    nodeId: row.node_id,
    kind: row.kind,
    payload: row.payload,
    status: row.status,
    leaseExpiresAt: row.lease_expires_at,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    result: row.result,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** True for a string that can be a job id (so a garbage id never reaches SQL as a cast error). */
function isJobId(value: string): boolean {
  return UUID.test(value)
}

export async function createJob(
  q: Queryable,
  job: { nodeId: string; kind: string; payload?: Record<string, unknown>; now: Date; maxAttempts?: number },
): Promise<JobRow> {
  const { rows } = await q.query<Row>(
    `INSERT INTO jobs (node_id, kind, payload, max_attempts, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5) RETURNING ${COLUMNS}`,
    [job.nodeId, job.kind, JSON.stringify(job.payload ?? {}), job.maxAttempts ?? 3, job.now],
  )
  return toJob(rows[0]!)
}

export async function getJob(q: Queryable, id: string): Promise<JobRow | undefined> {
  if (!isJobId(id)) return undefined
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM jobs WHERE id = $1`, [id])
  return rows[0] ? toJob(rows[0]) : undefined
}

/**
 * Fail the node's jobs whose lease expired after their last allowed attempt, so an
 * agent that keeps dying on a job does not get it forever. Expiry is judged on the
 * database's clock: gateways with skewed clocks agree on it.
 */
export async function failExhaustedJobs(q: Queryable, nodeId: string): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE jobs SET status = 'failed', lease_token_sha256 = NULL, lease_expires_at = NULL, updated_at = now(),
            result = jsonb_build_object('error', 'lease_expired', 'attempts', attempts)
      WHERE node_id = $1 AND status = 'leased' AND lease_expires_at < now() AND attempts >= max_attempts`,
    [nodeId],
  )
  return rowCount ?? 0
}

/**
 * Lease the node's oldest open job (queued, or leased with an expired lease) under a new
 * token for `leaseSeconds`, only while the node is active. Expiry is set and judged on the
 * DATABASE's clock (now()), never a gateway's: two gateways with skewed clocks cannot both
 * think a lease expired. SKIP LOCKED: two gateways never hand out one job twice at once.
 */
export async function leaseNextJob(
  q: Queryable,
  lease: { nodeId: string; leaseTokenSha256: Buffer; leaseSeconds: number },
): Promise<JobRow | undefined> {
  const { rows } = await q.query<Row>(
    `UPDATE jobs SET status = 'leased', lease_token_sha256 = $2, lease_expires_at = now() + make_interval(secs => $3), attempts = attempts + 1, updated_at = now()
      WHERE id = (
        SELECT j.id FROM jobs j JOIN nodes n ON n.id = j.node_id AND n.status = 'active'
         WHERE j.node_id = $1
           AND (j.status = 'queued' OR (j.status = 'leased' AND j.lease_expires_at < now() AND j.attempts < j.max_attempts))
         ORDER BY j.created_at, j.id
         LIMIT 1
         FOR UPDATE OF j SKIP LOCKED)
        -- Re-checked on the locked row: a lease another gateway renewed meanwhile is not taken.
        AND (status = 'queued' OR lease_expires_at < now())
      RETURNING ${COLUMNS}`,
    [lease.nodeId, lease.leaseTokenSha256, lease.leaseSeconds],
  )
  return rows[0] ? toJob(rows[0]) : undefined
}

/** Extend a lease by `leaseSeconds` from the database's now(); false (nothing written) for a stale token, another node, or a fenced node. */
export async function extendJobLease(
  q: Queryable,
  lease: { jobId: string; nodeId: string; leaseTokenSha256: Buffer; leaseSeconds: number },
): Promise<boolean> {
  if (!isJobId(lease.jobId)) return false
  const { rowCount } = await q.query(
    `UPDATE jobs j SET lease_expires_at = now() + make_interval(secs => $4), updated_at = now()
       FROM nodes n
      WHERE j.id = $1 AND j.node_id = $2 AND n.id = j.node_id AND n.status = ANY($5)
        AND j.status = 'leased' AND j.lease_token_sha256 = $3`,
    [lease.jobId, lease.nodeId, lease.leaseTokenSha256, lease.leaseSeconds, JOB_HOLDER_STATUSES],
  )
  return (rowCount ?? 0) > 0
}

/** Finish a job; false (nothing written) for a stale token, another node, or a fenced node. */
export async function completeJob(
  q: Queryable,
  done: {
    jobId: string
    nodeId: string
    leaseTokenSha256: Buffer
    status: 'succeeded' | 'failed'
    result: unknown
    now: Date
  },
): Promise<boolean> {
  if (!isJobId(done.jobId)) return false
  const { rowCount } = await q.query(
    `UPDATE jobs j SET status = $4, result = $5, lease_token_sha256 = NULL, lease_expires_at = NULL, updated_at = $6
       FROM nodes n
      WHERE j.id = $1 AND j.node_id = $2 AND n.id = j.node_id AND n.status = ANY($7)
        AND j.status = 'leased' AND j.lease_token_sha256 = $3`,
    [
      done.jobId,
      done.nodeId,
      done.leaseTokenSha256,
      done.status,
      JSON.stringify(done.result ?? null),
      done.now,
      JOB_HOLDER_STATUSES,
    ],
  )
  return (rowCount ?? 0) > 0
}

/**
 * The checks jobs that say something about the host: finished, and taken by its agent at least once. A job
 * withdrawn before any agent leased it (a `node check` that timed out while the gateway was down) and one
 * failed unleased (a decommission) ran nothing: a timeout is not a failed check. SQL over the alias `j`.
 */
export const CHECKS_TAKEN = "j.kind = 'checks' AND (j.status = 'succeeded' OR (j.status = 'failed' AND j.attempts > 0))"

/**
 * Withdraw a job no agent has taken yet (a waiting command gave up); false if it was leased meanwhile.
 * It ends `failed` with `withdrawn: true` and 0 attempts: nothing ran, so it says nothing about the host
 * (CHECKS_TAKEN below leaves such a checks job out of "the latest checks").
 */
export async function withdrawQueuedJob(q: Queryable, id: string, reason: string, now: Date): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE jobs SET status = 'failed', result = jsonb_build_object('error', $2::text, 'withdrawn', true), updated_at = $3 WHERE id = $1 AND status = 'queued'`,
    [id, reason, now],
  )
  return (rowCount ?? 0) > 0
}
