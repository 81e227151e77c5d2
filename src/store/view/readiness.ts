// What `fleetkit fleet ready` and the status page's verdict read of each node in one statement: its
// status and admission, heartbeat age and agent version, its latest checks, its last sync attempt
// (with the definition that run applied) and its last drift check.
import type { Queryable } from '../database.js'
import type { DriftState } from '../nodes/node-drift.js'
import type { NodeStatus } from '../nodes/nodes.js'
import { CHECKS_TAKEN } from '../scheduling/jobs.js'

export interface NodeReadinessFacts {
  id: string
  pool: string
  status: NodeStatus
  /** The admission `node admit` set. */
  schedulable: boolean
  heartbeatAgeSeconds: number | null
  agentVersion: string | null
  /** The latest finished checks job: its status and the IDs that failed or warned. */
  checks: { jobStatus: 'succeeded' | 'failed'; failed: string[]; warned: string[] } | null
  /** The node's row in the last `fleetkit sync` run that attempted it. */
  lastSync: {
    runId: number
    state: string
    code: string | null
    /**
     * The definition the node converged on: this run's, or after a run narrowed by --tags the last whole
     * run's (null when none converged it since, or none did).
     */
    definitionSha256: string | null
    /** The agent version that run converged the node to. */
    agentVersion: string | null
  } | null
  /** The node's row in the last `fleetkit drift` run that reached it. */
  lastDrift: { runId: number; state: string; code: string | null } | null
  /** Its drift as its agent last reported it (node_drift); null when never judged. */
  agentDrift: {
    state: DriftState
    parts: string[]
    reason: string | null
    since: Date
    fingerprintRunId: number | null
  } | null
}

/** States a node's row ends in once its run attempted it (pending, running, skipped and not_attempted did not). */
const ATTEMPTED = `('converged', 'changed', 'failed', 'unreachable', 'rolled_back')`

/**
 * The facts of the named nodes and of every other node of the named pools whose status is not
 * retired, parked or draining; ordered by pool and id.
 */
export async function readinessFacts(
  q: Queryable,
  scope: { nodeIds: readonly string[]; pools: readonly string[] | null },
): Promise<NodeReadinessFacts[]> {
  const { rows } = await q.query<Record<string, unknown>>(
    `SELECT n.id, n.pool, n.status, n.schedulable, n.host_agent_version,
            extract(epoch FROM now() - n.last_seen_at) AS heartbeat_age,
            cj.status AS checks_status, cj.failed AS checks_failed, cj.warned AS checks_warned,
            s.run_id AS sync_run, s.state AS sync_state, s.code AS sync_code, s.definition_sha256 AS sync_definition, s.agent_version AS sync_agent,
            d.run_id AS drift_run, d.state AS drift_state, d.code AS drift_code,
            ad.state AS agent_drift, ad.parts AS agent_drift_parts, ad.reason AS agent_drift_reason,
            ad.since AS agent_drift_since, ad.fingerprint_run_id AS agent_drift_run
       FROM nodes n
       LEFT JOIN node_drift ad ON ad.node_id = n.id
       LEFT JOIN LATERAL (
         SELECT j.status,
                ARRAY(SELECT c ->> 'id' FROM jsonb_array_elements(CASE WHEN jsonb_typeof(j.result -> 'checks') = 'array' THEN j.result -> 'checks' ELSE '[]'::jsonb END) c WHERE c ->> 'status' = 'fail') AS failed,
                ARRAY(SELECT c ->> 'id' FROM jsonb_array_elements(CASE WHEN jsonb_typeof(j.result -> 'checks') = 'array' THEN j.result -> 'checks' ELSE '[]'::jsonb END) c WHERE c ->> 'status' = 'warn') AS warned
           FROM jobs j WHERE j.node_id = n.id AND ${CHECKS_TAKEN}
          ORDER BY j.updated_at DESC, j.id DESC LIMIT 1) cj ON true
       LEFT JOIN LATERAL (
         -- A run narrowed by --tags converged some roles only: the definition a node converged on is the one
         -- of its last whole run, and only if that converged it; a tagged run's own failure still counts.
         SELECT sn.run_id, sn.state, sn.code, sn.agent_version,
                CASE WHEN COALESCE(r.plan -> 'tags', '[]'::jsonb) = '[]'::jsonb THEN r.definition_sha256
                     ELSE (SELECT r2.definition_sha256
                             FROM sync_run_nodes sn2 JOIN sync_runs r2 ON r2.id = sn2.run_id
                            WHERE sn2.node_id = n.id AND r2.kind = 'sync' AND r2.id < r.id
                              AND sn2.state IN ('converged', 'changed')
                              AND COALESCE(r2.plan -> 'tags', '[]'::jsonb) = '[]'::jsonb
                              AND NOT EXISTS (
                                SELECT 1 FROM sync_run_nodes sn3 JOIN sync_runs r3 ON r3.id = sn3.run_id
                                 WHERE sn3.node_id = n.id AND r3.kind = 'sync' AND r3.id > r2.id AND r3.id < r.id
                                   AND sn3.state IN ('failed', 'unreachable', 'rolled_back'))
                            ORDER BY r2.id DESC LIMIT 1)
                END AS definition_sha256
           FROM sync_run_nodes sn JOIN sync_runs r ON r.id = sn.run_id
          WHERE sn.node_id = n.id AND r.kind = 'sync' AND sn.state IN ${ATTEMPTED}
          ORDER BY sn.run_id DESC LIMIT 1) s ON true
       LEFT JOIN LATERAL (
         SELECT sn.run_id, sn.state, sn.code
           FROM sync_run_nodes sn JOIN sync_runs r ON r.id = sn.run_id
          WHERE sn.node_id = n.id AND r.kind = 'drift' AND sn.state IN ${ATTEMPTED}
          ORDER BY sn.run_id DESC LIMIT 1) d ON true
      WHERE n.id = ANY($1::text[])
         OR (($2::text[] IS NULL OR n.pool = ANY($2::text[])) AND n.status NOT IN ('retired', 'parked', 'draining'))
      ORDER BY n.pool, n.id`,
    [scope.nodeIds, scope.pools],
  )
  return rows.map((r) => ({
    id: r.id as string,
    pool: r.pool as string,
    status: r.status as NodeStatus,
    schedulable: r.schedulable as boolean,
    heartbeatAgeSeconds: r.heartbeat_age === null ? null : Math.max(0, Math.round(Number(r.heartbeat_age))),
    agentVersion: (r.host_agent_version as string | null) ?? null,
    checks:
      r.checks_status === null
        ? null
        : {
            jobStatus: r.checks_status as 'succeeded' | 'failed',
            failed: (r.checks_failed as string[]).map((id) => String(id).slice(0, 64)),
            warned: (r.checks_warned as string[]).map((id) => String(id).slice(0, 64)),
          },
    lastSync:
      r.sync_run === null
        ? null
        : {
            runId: Number(r.sync_run),
            state: r.sync_state as string,
            code: (r.sync_code as string | null) ?? null,
            definitionSha256: (r.sync_definition as string | null) ?? null,
            agentVersion: (r.sync_agent as string | null) ?? null,
          },
    lastDrift:
      r.drift_run === null
        ? null
        : { runId: Number(r.drift_run), state: r.drift_state as string, code: (r.drift_code as string | null) ?? null },
    agentDrift:
      r.agent_drift === null
        ? null
        : {
            state: r.agent_drift as DriftState,
            parts: r.agent_drift_parts as string[],
            reason: (r.agent_drift_reason as string | null) ?? null,
            since: r.agent_drift_since as Date,
            fingerprintRunId: r.agent_drift_run === null ? null : Number(r.agent_drift_run),
          },
  }))
}

/** The definition the last `fleetkit sync` that finished applied, and its run: the status page's "current definition". */
export async function lastSyncedDefinition(
  q: Queryable,
): Promise<{ runId: number; definitionSha256: string } | undefined> {
  const { rows } = await q.query<{ id: string; definition_sha256: string }>(
    `SELECT id, definition_sha256 FROM sync_runs WHERE kind = 'sync' AND status = 'finished' ORDER BY id DESC LIMIT 1`,
  )
  const row = rows[0]
  return row ? { runId: Number(row.id), definitionSha256: row.definition_sha256 } : undefined
}
