// The node lifecycle's writes: admit, drain, decommission, park and unpark, each one
// conditional UPDATE (or a FOR UPDATE transaction step) plus its event; rules are in src/lifecycle/.
import type { Queryable } from '../database.js'
import { NODE_COLUMNS, type NodeRow, type NodeStatus, toNode } from './nodes.js'
import { CHECKS_TAKEN } from '../scheduling/jobs.js'

/** The node row locked FOR UPDATE, with its silence on the database's clock. Call inside a transaction. */
export async function lockNode(
  q: Queryable,
  nodeId: string,
): Promise<(NodeRow & { silentSeconds: number | null; dbNow: Date; parkedFrom: NodeStatus | null }) | undefined> {
  const { rows } = await q.query<Record<string, unknown>>(
    `SELECT ${NODE_COLUMNS}, extract(epoch FROM now() - last_seen_at) AS silent_seconds, now() AS db_now, parked_from FROM nodes WHERE id = $1 FOR UPDATE`,
    [nodeId],
  )
  const r = rows[0]
  if (!r) return undefined
  return {
    ...toNode(r),
    silentSeconds: r.silent_seconds === null ? null : Number(r.silent_seconds),
    dbNow: r.db_now as Date,
    parkedFrom: (r.parked_from as NodeStatus | null) ?? null,
  }
}

/** Set status, schedulable and the lifecycle columns of one node; returns the row as written. */
export async function writeNodeLifecycle(
  q: Queryable,
  nodeId: string,
  change: {
    status: NodeStatus
    schedulable: boolean
    parkedFrom?: NodeStatus | null
    unparked?: boolean
    retired?: boolean
    clearLost?: boolean
  },
): Promise<NodeRow> {
  const { rows } = await q.query<Record<string, unknown>>(
    `UPDATE nodes SET status = $2, schedulable = $3,
            parked_from = CASE WHEN $4::boolean THEN $5 ELSE parked_from END,
            unparked_at = CASE WHEN $6::boolean THEN now() ELSE unparked_at END,
            retired_at = CASE WHEN $7::boolean THEN now() ELSE retired_at END,
            lost_at = CASE WHEN $8::boolean THEN NULL ELSE lost_at END,
            unhealthy_at = CASE WHEN $2 = 'unhealthy' THEN unhealthy_at ELSE NULL END,
            updated_at = now()
      WHERE id = $1
      RETURNING ${NODE_COLUMNS}`,
    [
      nodeId,
      change.status,
      change.schedulable,
      change.parkedFrom !== undefined,
      change.parkedFrom ?? null,
      change.unparked ?? false,
      change.retired ?? false,
      change.clearLost ?? false,
    ],
  )
  return toNode(rows[0]!)
}

export async function recordNodeCapacity(
  q: Queryable,
  nodeId: string,
  capacity: { cpu: number; memoryMib: number; diskGib: number },
): Promise<void> {
  await q.query(
    'UPDATE nodes SET capacity_cpu = $2, capacity_memory_mib = $3, capacity_disk_gib = $4, updated_at = now() WHERE id = $1',
    [nodeId, capacity.cpu, capacity.memoryMib, capacity.diskGib],
  )
}

/**
 * What a drain or decommission waits for: active allocations and live leases of the node; and what no
 * wait ends, the allocations stranded on it (a lost node of a stateful pool: a person releases them with
 * `fleetkit alloc release --stranded NODE`, or the node heartbeats again and gets them back).
 */
export async function nodeHoldings(
  q: Queryable,
  nodeId: string,
): Promise<{ activeAllocations: string[]; strandedAllocations: string[]; liveLeases: string[] }> {
  const a = await q.query<{ id: string; status: string }>(
    "SELECT id::text AS id, status FROM allocations WHERE node_id = $1 AND status IN ('active', 'stranded') ORDER BY id",
    [nodeId],
  )
  // A lease past its expiry is not live: it would be retried, and a drained node leases nothing.
  const l = await q.query<{ id: string }>(
    "SELECT id::text AS id FROM jobs WHERE node_id = $1 AND status = 'leased' AND lease_expires_at > now() ORDER BY id",
    [nodeId],
  )
  return {
    activeAllocations: a.rows.filter((r) => r.status === 'active').map((r) => r.id),
    strandedAllocations: a.rows.filter((r) => r.status === 'stranded').map((r) => r.id),
    liveLeases: l.rows.map((r) => r.id),
  }
}

/** The latest finished `checks` job of the node that its agent took (CHECKS_TAKEN): its status and result. */
export async function latestChecksJob(
  q: Queryable,
  nodeId: string,
): Promise<{ id: string; status: string; result: Record<string, unknown> | null } | undefined> {
  const { rows } = await q.query<{ id: string; status: string; result: Record<string, unknown> | null }>(
    `SELECT j.id::text AS id, j.status, j.result FROM jobs j WHERE j.node_id = $1 AND ${CHECKS_TAKEN}
      ORDER BY j.updated_at DESC, j.id DESC LIMIT 1`,
    [nodeId],
  )
  return rows[0]
}

/** Fail the node's queued jobs (a decommission: no agent will ever take them). */
export async function failQueuedJobs(q: Queryable, nodeId: string, reason: string): Promise<number> {
  const { rowCount } = await q.query(
    `UPDATE jobs SET status = 'failed', result = jsonb_build_object('error', $2::text), updated_at = now() WHERE node_id = $1 AND status = 'queued'`,
    [nodeId, reason],
  )
  return rowCount ?? 0
}
