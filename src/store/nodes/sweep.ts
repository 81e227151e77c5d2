// The sweep's SQL: silent nodes become unhealthy, then lost, judged on the DATABASE's clock
// (now()), never a gateway's; a loss fences jobs, releases allocations (strands them on a stateful
// pool's node) and writes one event; a lost node heard from again gets its stranded ones back.
import type { Queryable } from '../database.js'

/** Held (session level) by whoever is sweeping right now: a gateway's tick or `fleetkit sweep`. */
export const SWEEP_LOCK_KEY = 7_020_865_401

/** What fencing writes into a job's result (spec 06). */
const FENCED_REASON = 'target node lost; lease fenced'

/** Silence, in SQL: from the later of the last heartbeat and an unpark; a node never heard from counts from its creation. */
const SILENT_SINCE = 'COALESCE(GREATEST(n.last_seen_at, n.unparked_at), n.created_at)'

/**
 * The silence judged, in seconds: since SILENT_SINCE, less the stretches in which no gateway could record a
 * heartbeat (sweep_gaps: merged when recorded, so each moment is subtracted once).
 */
const SILENCE = `(extract(epoch FROM now() - ${SILENT_SINCE}) - COALESCE((
    SELECT sum(extract(epoch FROM LEAST(g.ended_at, now()) - GREATEST(g.started_at, ${SILENT_SINCE})))
      FROM sweep_gaps g WHERE g.ended_at > ${SILENT_SINCE}), 0))`

/** Silent past `$N` seconds: the plain silence first (an index-friendly bound), then less the gaps. */
function silentPast(param: string): string {
  return `${SILENT_SINCE} < now() - make_interval(secs => ${param}) AND ${SILENCE} > ${param}`
}

export interface UnhealthyTransition {
  nodeId: string
  /**
   * @minimum 0
   * @asType integer
   */
  silentSeconds: number
}

/** Active nodes silent longer than the threshold become unhealthy (one event each), in one statement. */
export async function markSilentNodesUnhealthy(
  q: Queryable,
  unhealthyAfterSeconds: number,
): Promise<UnhealthyTransition[]> {
  const { rows } = await q.query<{ id: string; silent: string }>(
    `WITH u AS (
       UPDATE nodes AS n SET status = 'unhealthy', unhealthy_at = now(), updated_at = now()
        WHERE n.status = 'active' AND ${silentPast('$1')}
       RETURNING n.id, ${SILENCE} AS silent
     ), e AS (
       INSERT INTO events (kind, node_id, data)
       SELECT 'node_unhealthy', u.id, jsonb_build_object('silent_seconds', round(u.silent), 'threshold_seconds', $1::int) FROM u
     )
     SELECT id, silent FROM u ORDER BY id`,
    [unhealthyAfterSeconds],
  )
  return rows.map((r) => ({ nodeId: r.id, silentSeconds: Math.round(Number(r.silent)) }))
}

export interface ExpiredEnrollment {
  nodeId: string
  /** @format date-time */
  expiredAt: string
}

/**
 * Provisioning nodes whose enrollment secret expired unused become `failed` (not schedulable; a
 * provisioned one's provision_state too), one `enrollment_expired` event each, in one statement.
 * The status is the guard: a replay, or a second sweeper, finds nothing left to fail.
 */
export async function failExpiredEnrollments(q: Queryable): Promise<ExpiredEnrollment[]> {
  const { rows } = await q.query<{ id: string; expired_at: Date }>(
    `WITH f AS (
       UPDATE nodes AS n SET status = 'failed', schedulable = false,
              provision_state = CASE WHEN n.provision_state IS NULL THEN NULL ELSE 'failed' END,
              provision_error = CASE WHEN n.provision_state IS NULL THEN n.provision_error ELSE 'enrollment secret expired unused' END,
              updated_at = now()
        WHERE n.status = 'provisioning' AND n.enrollment_secret_sha256 IS NOT NULL
          AND n.enrollment_secret_used_at IS NULL AND n.enrollment_secret_expires_at <= now()
       RETURNING n.id, n.enrollment_secret_expires_at AS expired_at
     ), e AS (
       INSERT INTO events (kind, node_id, data)
       SELECT 'enrollment_expired', f.id, jsonb_build_object(
                'from', 'provisioning',
                'expired_at', to_char(f.expired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
         FROM f
     )
     SELECT id, expired_at FROM f ORDER BY id`,
  )
  return rows.map((r) => ({ nodeId: r.id, expiredAt: r.expired_at.toISOString() }))
}

/** Nodes expected to heartbeat (active, unhealthy, draining) that have been silent past the lost threshold. */
export async function findLostCandidates(q: Queryable, lostAfterSeconds: number, limit = 10_000): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT n.id FROM nodes n
      WHERE n.status IN ('active', 'unhealthy', 'draining') AND ${silentPast('$1')}
      ORDER BY n.id LIMIT $2`,
    [lostAfterSeconds, limit],
  )
  return rows.map((r) => r.id)
}

export interface LostReclamation {
  nodeId: string
  lostAt: Date
  silentSeconds: number
  fencedJobs: { id: string; was: string }[]
  releasedAllocations: string[]
  /** A stateful pool's node: its allocations, kept and marked stranded until a person decides. */
  strandedAllocations: string[]
}

/** What the node_lost event of a stateful pool's node tells a person to do. */
const STRANDED_DECISION =
  'a person decides: fleetkit alloc release --stranded NODE --yes (the data on it is given up), or the node heartbeats again and its allocations resume'

/**
 * Declare one node lost, in ONE statement (so one transaction): status `lost`, not schedulable,
 * lost_at; its queued and leased jobs failed with a cleared token (fenced); its allocations
 * released, or, when its pool is stateful (pool_policies), stranded (kept, their capacity held);
 * one `node_lost` event. The status and silence are re-checked in the UPDATE, so a
 * replay, a second sweeper or a heartbeat that landed meanwhile makes it a no-op (undefined).
 */
export async function reclaimLostNode(
  q: Queryable,
  nodeId: string,
  lostAfterSeconds: number,
): Promise<LostReclamation | undefined> {
  const { rows } = await q.query<{
    id: string
    lost_at: Date
    silent: string
    fenced: { id: string; was: string }[] | null
    released: string[] | null
    stranded: string[] | null
  }>(
    `WITH lost AS (
       UPDATE nodes AS n SET status = 'lost', schedulable = false, lost_at = now(), updated_at = now()
        WHERE n.id = $1 AND n.status IN ('active', 'unhealthy', 'draining') AND ${silentPast('$2')}
       RETURNING n.id, n.lost_at, ${SILENCE} AS silent,
                 COALESCE((SELECT p.stateful FROM pool_policies p WHERE p.pool = n.pool), false) AS stateful
     ), open AS (
       SELECT j.id, j.status FROM jobs j WHERE j.node_id = $1 AND j.status IN ('queued', 'leased') FOR UPDATE
     ), fenced AS (
       UPDATE jobs AS j SET status = 'failed', lease_token_sha256 = NULL, lease_expires_at = NULL, fenced_at = now(), updated_at = now(),
              result = jsonb_build_object('error', $3::text, 'was', o.status)
         FROM open o
        WHERE j.id = o.id AND EXISTS (SELECT 1 FROM lost)
       RETURNING j.id::text AS id, o.status AS was
     ), released AS (
       UPDATE allocations AS a SET status = 'released', released_at = now(), release_reason = 'node_lost'
        WHERE a.node_id = $1 AND a.status = 'active' AND EXISTS (SELECT 1 FROM lost WHERE NOT lost.stateful)
       RETURNING a.id::text AS id
     ), stranded AS (
       UPDATE allocations AS a SET status = 'stranded', stranded_at = now()
        WHERE a.node_id = $1 AND a.status = 'active' AND EXISTS (SELECT 1 FROM lost WHERE lost.stateful)
       RETURNING a.id::text AS id
     ), event AS (
       INSERT INTO events (kind, node_id, data)
       SELECT 'node_lost', lost.id, jsonb_build_object(
                'lost_at', to_char(lost.lost_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                'silent_seconds', round(lost.silent), 'threshold_seconds', $2::int,
                'fenced_jobs', (SELECT count(*) FROM fenced), 'released_allocations', (SELECT count(*) FROM released))
              || CASE WHEN lost.stateful THEN jsonb_build_object(
                'stateful', true, 'stranded_allocations', (SELECT count(*) FROM stranded),
                'decision', replace($4::text, 'NODE', lost.id)) ELSE '{}'::jsonb END
         FROM lost
       ON CONFLICT (node_id, (data ->> 'lost_at')) WHERE kind = 'node_lost' DO NOTHING
     )
     SELECT lost.id, lost.lost_at, lost.silent,
            (SELECT jsonb_agg(jsonb_build_object('id', f.id, 'was', f.was) ORDER BY f.id) FROM fenced f) AS fenced,
            (SELECT array_agg(r.id ORDER BY r.id) FROM released r) AS released,
            (SELECT array_agg(s.id ORDER BY s.id) FROM stranded s) AS stranded
       FROM lost`,
    [nodeId, lostAfterSeconds, FENCED_REASON, STRANDED_DECISION],
  )
  const row = rows[0]
  if (!row) return undefined
  return {
    nodeId: row.id,
    lostAt: row.lost_at,
    silentSeconds: Math.round(Number(row.silent)),
    fencedJobs: row.fenced ?? [],
    releasedAllocations: row.released ?? [],
    strandedAllocations: row.stranded ?? [],
  }
}

export interface ResumedAllocations {
  nodeId: string
  /** The allocations active again. */
  allocationIds: string[]
}

/**
 * A node heard from since its allocations were stranded (last_seen_at after stranded_at) gets them
 * back: `active` again, one `allocations_resumed` event per node, in one statement. The node stays
 * lost and unschedulable until `fleetkit node admit` takes it back (an admit before this sweep
 * leaves them stranded until it: judged on the heartbeat, not the status, they resume either way).
 */
export async function resumeStrandedAllocations(q: Queryable): Promise<ResumedAllocations[]> {
  const { rows } = await q.query<{ node_id: string; ids: string[] }>(
    `WITH r AS (
       UPDATE allocations AS a SET status = 'active', stranded_at = NULL
         FROM nodes n
        WHERE n.id = a.node_id AND a.status = 'stranded' AND n.status <> 'retired' AND n.last_seen_at > a.stranded_at
       RETURNING a.node_id, a.id::text AS id
     ), g AS (
       SELECT node_id, array_agg(id ORDER BY id) AS ids FROM r GROUP BY node_id
     ), e AS (
       INSERT INTO events (kind, node_id, data)
       SELECT 'allocations_resumed', g.node_id,
              jsonb_build_object('allocations', cardinality(g.ids), 'allocation_ids', to_jsonb(g.ids), 'reason', 'node heartbeats again')
         FROM g
     )
     SELECT node_id, ids FROM g ORDER BY node_id`,
  )
  return rows.map((r) => ({ nodeId: r.node_id, allocationIds: r.ids }))
}

/**
 * An unhealthy node's authenticated request restores it: `active` again, last_seen_at moved to
 * the database's now() (the coalesced heartbeat lands later). True when this call restored it.
 */
export async function restoreUnhealthyNode(q: Queryable, nodeId: string): Promise<boolean> {
  const { rowCount } = await q.query(
    `WITH r AS (
       UPDATE nodes SET status = 'active', unhealthy_at = NULL, last_seen_at = GREATEST(last_seen_at, now()), updated_at = now()
        WHERE id = $1 AND status = 'unhealthy'
       RETURNING id
     )
     INSERT INTO events (kind, node_id, data) SELECT 'node_recovered', id, '{"from":"unhealthy"}'::jsonb FROM r`,
    [nodeId],
  )
  return (rowCount ?? 0) > 0
}

/** A lost node's cleanup list: the jobs fenced away from it at its (latest) loss, then any still open. */
export async function listCleanupJobIds(q: Queryable, nodeId: string, limit: number): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT j.id::text AS id FROM jobs j JOIN nodes n ON n.id = j.node_id
      WHERE j.node_id = $1 AND ((j.fenced_at IS NOT NULL AND j.fenced_at >= COALESCE(n.lost_at, '-infinity')) OR j.status IN ('queued', 'leased'))
      ORDER BY j.created_at, j.id LIMIT $2`,
    [nodeId, limit],
  )
  return rows.map((r) => r.id)
}
