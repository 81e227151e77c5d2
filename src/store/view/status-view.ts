// What the gateway's status page reads beyond the fleet list (fleet.ts): each node's latest
// finished `checks` job counted by status, each node's latest sync, and the newest events.
import type { Queryable } from '../database.js'
import type { EventRow } from '../events.js'
import { CHECKS_TAKEN } from '../scheduling/jobs.js'

export interface NodeCheckSummary {
  nodeId: string
  /** The job's own status: `failed` when the agent could not run the checks at all. */
  jobStatus: 'succeeded' | 'failed'
  finishedAt: Date
  pass: number
  warn: number
  fail: number
  /** Checks that do not apply to the host (a declared container's kernel checks): neither passed nor failed. */
  notApplicable: number
}

/** Per node, its latest finished `checks` job with its results counted by status. */
export async function latestCheckSummaries(q: Queryable): Promise<NodeCheckSummary[]> {
  const { rows } = await q.query<{
    node_id: string
    status: 'succeeded' | 'failed'
    updated_at: Date
    pass: string
    warn: string
    fail: string
    not_applicable: string
  }>(
    `SELECT j.node_id, j.status, j.updated_at,
            (SELECT count(*) FROM jsonb_array_elements(CASE WHEN jsonb_typeof(j.result -> 'checks') = 'array' THEN j.result -> 'checks' ELSE '[]'::jsonb END) c WHERE c ->> 'status' = 'pass') AS pass,
            (SELECT count(*) FROM jsonb_array_elements(CASE WHEN jsonb_typeof(j.result -> 'checks') = 'array' THEN j.result -> 'checks' ELSE '[]'::jsonb END) c WHERE c ->> 'status' = 'warn') AS warn,
            (SELECT count(*) FROM jsonb_array_elements(CASE WHEN jsonb_typeof(j.result -> 'checks') = 'array' THEN j.result -> 'checks' ELSE '[]'::jsonb END) c WHERE c ->> 'status' = 'fail') AS fail,
            (SELECT count(*) FROM jsonb_array_elements(CASE WHEN jsonb_typeof(j.result -> 'checks') = 'array' THEN j.result -> 'checks' ELSE '[]'::jsonb END) c WHERE c ->> 'status' = 'not_applicable') AS not_applicable
       FROM (SELECT DISTINCT ON (j.node_id) j.node_id, j.status, j.updated_at, j.result FROM jobs j
              WHERE ${CHECKS_TAKEN}
              ORDER BY j.node_id, j.updated_at DESC, j.id DESC) j`,
  )
  return rows.map((r) => ({
    nodeId: r.node_id,
    jobStatus: r.status,
    finishedAt: r.updated_at,
    pass: Number(r.pass),
    warn: Number(r.warn),
    fail: Number(r.fail),
    notApplicable: Number(r.not_applicable),
  }))
}

export interface NodeLastSync {
  nodeId: string
  runId: number
  state: string
  finishedAt: Date | null
}

/** Per node, its state in the newest `fleetkit sync` run that included it. */
export async function lastSyncPerNode(q: Queryable): Promise<NodeLastSync[]> {
  const { rows } = await q.query<{ node_id: string; run_id: string; state: string; finished_at: Date | null }>(
    `SELECT DISTINCT ON (n.node_id) n.node_id, n.run_id, n.state, n.finished_at
       FROM sync_run_nodes n JOIN sync_runs r ON r.id = n.run_id
      WHERE r.kind = 'sync'
      ORDER BY n.node_id, n.run_id DESC`,
  )
  return rows.map((r) => ({ nodeId: r.node_id, runId: Number(r.run_id), state: r.state, finishedAt: r.finished_at }))
}

/** The newest `limit` events, newest first. */
export async function latestEvents(q: Queryable, limit: number): Promise<EventRow[]> {
  const { rows } = await q.query<{
    id: string
    at: Date
    kind: string
    node_id: string | null
    data: Record<string, unknown>
  }>('SELECT id, at, kind, node_id, data FROM events ORDER BY at DESC, id DESC LIMIT $1', [limit])
  return rows.map((r) => ({ id: Number(r.id), at: r.at, kind: r.kind, nodeId: r.node_id, data: r.data }))
}
