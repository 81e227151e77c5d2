// The fleet as operators see it: each node with its heartbeat age (on the database's clock),
// certificate expiry, capacity held by active and stranded allocations, and a lost node's reclamation.
import type { Queryable } from '../database.js'
import type { EventRow } from '../events.js'
import type { DriftState } from '../nodes/node-drift.js'
import { NODE_COLUMNS, type NodeRow, type NodeStatus, toNode } from '../nodes/nodes.js'

export interface FleetNode extends NodeRow {
  /**
   * Whether jobs and reservations may land on the node now: admitted (`node admit`) and active. An
   * unhealthy node keeps its admission (it resumes when healthy) but is not schedulable meanwhile.
   */
  schedulable: boolean
  /** The admission itself, as `node admit` set it and a drain, a loss or a retirement took it away. */
  admitted: boolean
  /** Seconds since the last heartbeat, on the database's clock; null when never heard from. */
  heartbeatAgeSeconds: number | null
  /** Seconds of silence as the sweep counts it (the later of last heartbeat and unpark). */
  silentSeconds: number
  /** The latest not_after of the node's unrevoked certificates; null when none. */
  certificateNotAfter: Date | null
  /** What the node's active and stranded allocations hold (a stranded one's capacity is not offered again). */
  reserved: { cpu: number; memoryMib: number; diskGib: number; allocations: number }
  /** Allocations stranded on the node now (a stateful pool's lost node), waiting for a person or its return. */
  strandedAllocations: number
  /** Jobs leased to the node right now. */
  liveLeases: number
  /** The node_lost event's data of the node's latest loss (fenced jobs, released allocations). */
  lostReclamation: Record<string, unknown> | null
  /** Its drift as its agent last reported it (node_drift, migration 0016); null when never judged. */
  drift: { state: DriftState; parts: string[]; reason: string | null; since: Date } | null
  /** Its hands-off hold (`node hold`, migration 0017): who, why, since when; null when not held. */
  hold: { reason: string; heldBy: string; heldAt: Date } | null
}

export interface FleetFilter {
  status?: NodeStatus[]
  pool?: string
  region?: string
  /** Schedulable now: admitted and active (FleetNode.schedulable). */
  schedulable?: boolean
  nodeId?: string
}

type Raw = Record<string, unknown>

export async function listFleet(q: Queryable, filter: FleetFilter = {}): Promise<FleetNode[]> {
  const prefixed = NODE_COLUMNS.split(/,\s*(?![^(]*\))/)
    .map((c) => qualify(c.trim()))
    .join(', ')
  const { rows } = await q.query(
    `SELECT ${prefixed},
            extract(epoch FROM now() - n.last_seen_at) AS heartbeat_age,
            extract(epoch FROM now() - COALESCE(GREATEST(n.last_seen_at, n.unparked_at), n.created_at)) AS silent,
            (SELECT max(c.not_after) FROM node_certificates c WHERE c.node_id = n.id AND c.revoked_at IS NULL) AS cert_not_after,
            COALESCE(a.cpu, 0) AS reserved_cpu, COALESCE(a.memory, 0) AS reserved_memory, COALESCE(a.disk, 0) AS reserved_disk, COALESCE(a.n, 0) AS reserved_n, COALESCE(a.stranded, 0) AS stranded_n,
            (SELECT count(*) FROM jobs j WHERE j.node_id = n.id AND j.status = 'leased') AS live_leases,
            CASE WHEN n.status = 'lost' THEN (SELECT e.data FROM events e WHERE e.node_id = n.id AND e.kind = 'node_lost' ORDER BY e.id DESC LIMIT 1) END AS lost_data,
            d.state AS drift_state, d.parts AS drift_parts, d.reason AS drift_reason, d.since AS drift_since,
            h.reason AS hold_reason, h.held_by AS hold_by, h.held_at AS hold_at
       FROM nodes n
       LEFT JOIN node_drift d ON d.node_id = n.id
       LEFT JOIN node_holds h ON h.node_id = n.id
       LEFT JOIN (SELECT node_id, sum(cpu) AS cpu, sum(memory_mib) AS memory, sum(disk_gib) AS disk, count(*) AS n,
                         count(*) FILTER (WHERE status = 'stranded') AS stranded
                    FROM allocations WHERE status IN ('active', 'stranded') GROUP BY node_id) a ON a.node_id = n.id
      WHERE ($1::text[] IS NULL OR n.status = ANY($1)) AND ($2::text IS NULL OR n.pool = $2)
        AND ($3::text IS NULL OR n.region = $3) AND ($4::boolean IS NULL OR (n.schedulable AND n.status = 'active') = $4) AND ($5::text IS NULL OR n.id = $5)
      ORDER BY n.pool, n.id`,
    [
      filter.status ?? null,
      filter.pool ?? null,
      filter.region ?? null,
      filter.schedulable ?? null,
      filter.nodeId ?? null,
    ],
  )
  return rows.map((r: Raw) => ({
    ...toNode(r),
    admitted: r.schedulable as boolean,
    schedulable: (r.schedulable as boolean) && r.status === 'active',
    heartbeatAgeSeconds: r.heartbeat_age === null ? null : Math.max(0, Math.round(Number(r.heartbeat_age))),
    silentSeconds: Math.max(0, Math.round(Number(r.silent))),
    certificateNotAfter: (r.cert_not_after as Date | null) ?? null,
    reserved: {
      cpu: Number(r.reserved_cpu),
      memoryMib: Number(r.reserved_memory),
      diskGib: Number(r.reserved_disk),
      allocations: Number(r.reserved_n),
    },
    strandedAllocations: Number(r.stranded_n),
    liveLeases: Number(r.live_leases),
    lostReclamation: (r.lost_data as Record<string, unknown> | null) ?? null,
    drift:
      r.drift_state === null
        ? null
        : {
            state: r.drift_state as DriftState,
            parts: r.drift_parts as string[],
            reason: (r.drift_reason as string | null) ?? null,
            since: r.drift_since as Date,
          },
    hold:
      r.hold_reason === null
        ? null
        : { reason: r.hold_reason as string, heldBy: r.hold_by as string, heldAt: r.hold_at as Date },
  }))
}

/** `host(public_ipv4) AS public_ipv4` -> `host(n.public_ipv4) AS public_ipv4`; `id` -> `n.id`. */
function qualify(column: string): string {
  const fn = /^(\w+)\((\w+)\)(.*)$/.exec(column)
  if (fn) return `${fn[1]}(n.${fn[2]})${fn[3]}`
  const expr = /^(\w+)(\s.*)$/.exec(column)
  if (expr) return `n.${expr[1]}${expr[2]}`
  return `n.${column}`
}

/** The node's most recent jobs, newest first (for `node show`). */
export async function listRecentJobs(
  q: Queryable,
  nodeId: string,
  limit: number,
): Promise<
  { id: string; kind: string; status: string; attempts: number; createdAt: Date; updatedAt: Date; fenced: boolean }[]
> {
  const { rows } = await q.query(
    `SELECT id::text AS id, kind, status, attempts, created_at, updated_at, fenced_at IS NOT NULL AS fenced
       FROM jobs WHERE node_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
    [nodeId, limit],
  )
  return rows.map((r: Raw) => ({
    id: r.id as string,
    kind: r.kind as string,
    status: r.status as string,
    attempts: Number(r.attempts),
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
    fenced: r.fenced as boolean,
  }))
}

/** Node counts by status and pool, and the largest heartbeat age per pool: what /metrics shows. */
export async function fleetGauges(q: Queryable): Promise<{
  byStatusPool: { status: string; pool: string; count: number }[]
  heartbeatAge: { pool: string; maxSeconds: number }[]
}> {
  const counts = await q.query<{ status: string; pool: string; count: string }>(
    'SELECT status, pool, count(*) AS count FROM nodes GROUP BY status, pool ORDER BY pool, status',
  )
  const ages = await q.query<{ pool: string; age: string }>(
    `SELECT pool, max(extract(epoch FROM now() - last_seen_at)) AS age FROM nodes
      WHERE status IN ('active', 'unhealthy', 'draining') AND last_seen_at IS NOT NULL GROUP BY pool ORDER BY pool`,
  )
  return {
    byStatusPool: counts.rows.map((r) => ({ status: r.status, pool: r.pool, count: Number(r.count) })),
    heartbeatAge: ages.rows.map((r) => ({ pool: r.pool, maxSeconds: Math.max(0, Number(r.age)) })),
  }
}

/** Per pool, seconds until the soonest not_after among live agent certificates of connected nodes. */
export async function soonestCertificateExpiryByPool(q: Queryable): Promise<{ pool: string; seconds: number }[]> {
  const { rows } = await q.query<{ pool: string; seconds: string }>(
    `SELECT n.pool, extract(epoch FROM min(c.not_after) - now()) AS seconds
       FROM node_certificates c JOIN nodes n ON n.id = c.node_id
      WHERE c.revoked_at IS NULL AND c.not_after > now() AND n.status IN ('active', 'unhealthy', 'draining')
      GROUP BY n.pool ORDER BY n.pool`,
  )
  return rows.map((r) => ({ pool: r.pool, seconds: Number(r.seconds) }))
}

/** The node's last `limit` events, oldest first (for `node show`). */
export async function listRecentNodeEvents(q: Queryable, nodeId: string, limit: number): Promise<EventRow[]> {
  const { rows } = await q.query<Raw>(
    'SELECT id, at, kind, node_id, data FROM events WHERE node_id = $1 ORDER BY at DESC, id DESC LIMIT $2',
    [nodeId, limit],
  )
  return rows.reverse().map((r) => ({
    id: Number(r.id),
    at: r.at as Date,
    kind: r.kind as string,
    nodeId: r.node_id as string | null,
    data: r.data as Record<string, unknown>,
  }))
}
