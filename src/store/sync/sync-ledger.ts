// The sync ledger's SQL (migration 0008): one row per sync, dry run or drift check and one per
// node of it; the fleet-wide sync lock; the revision the last complete sync applied.
import type { Queryable } from '../database.js'

/** Held (session level) by the one `fleetkit sync` running against this fleet's state. */
export const SYNC_LOCK_KEY = 7_020_865_410

export type NodeSyncState =
  | 'pending'
  | 'running'
  | 'converged'
  | 'changed'
  | 'failed'
  | 'unreachable'
  | 'rolled_back'
  | 'not_attempted'
  | 'skipped'
export type SyncRunKind = 'sync' | 'dry_run' | 'drift'
export type SyncOutcome = 'converged' | 'canary_failed' | 'partial' | 'unreachable' | 'drifted' | 'no_drift'
type SyncPhase = 'canary' | 'fleet' | 'skipped'

export interface SyncRunRow {
  id: number
  kind: SyncRunKind
  revision: string | null
  definitionSha256: string
  planHash: string
  plan: Record<string, unknown>
  startedBy: string
  pid: number
  ansiblePid: number | null
  status: 'running' | 'finished'
  outcome: SyncOutcome | null
  startedAt: Date
  finishedAt: Date | null
  attempts: number
}

export interface SyncNodeRow {
  nodeId: string
  phase: SyncPhase
  state: NodeSyncState
  code: string | null
  message: string | null
  tasksOk: number
  tasksChanged: number
  tasksFailed: number
  changes: Record<string, string[]>
  appliedRevision: string | null
  agentVersion: string | null
}

export interface NewSyncRun extends Pick<
  SyncRunRow,
  'kind' | 'revision' | 'definitionSha256' | 'planHash' | 'plan' | 'startedBy' | 'pid'
> {
  nodes: { nodeId: string; phase: SyncPhase; state: NodeSyncState; message?: string }[]
}

const RUN_COLUMNS =
  'id, kind, revision, definition_sha256, plan_hash, plan, started_by, pid, ansible_pid, status, outcome, started_at, finished_at, attempts'

function toRun(r: Record<string, unknown>): SyncRunRow {
  return {
    id: Number(r.id),
    kind: r.kind as SyncRunKind,
    revision: (r.revision as string | null) ?? null,
    definitionSha256: r.definition_sha256 as string,
    planHash: r.plan_hash as string,
    plan: r.plan as Record<string, unknown>,
    startedBy: r.started_by as string,
    pid: r.pid as number,
    ansiblePid: (r.ansible_pid as number | null) ?? null,
    status: r.status as 'running' | 'finished',
    outcome: (r.outcome as SyncOutcome | null) ?? null,
    startedAt: r.started_at as Date,
    finishedAt: (r.finished_at as Date | null) ?? null,
    attempts: r.attempts as number,
  }
}

/** The run and its node rows, in one statement (one transaction): a run is never half recorded. */
export async function createSyncRun(q: Queryable, run: NewSyncRun): Promise<SyncRunRow> {
  const { rows } = await q.query(
    `WITH r AS (
       INSERT INTO sync_runs (kind, revision, definition_sha256, plan_hash, plan, started_by, pid)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${RUN_COLUMNS}
     ), n AS (
       INSERT INTO sync_run_nodes (run_id, node_id, phase, state, message)
       SELECT r.id, x.node_id, x.phase, x.state, x.message FROM r, jsonb_to_recordset($8::jsonb) AS x(node_id text, phase text, state text, message text)
     )
     SELECT * FROM r`,
    [
      run.kind,
      run.revision,
      run.definitionSha256,
      run.planHash,
      JSON.stringify(run.plan),
      run.startedBy,
      run.pid,
      JSON.stringify(
        run.nodes.map((n) => ({ node_id: n.nodeId, phase: n.phase, state: n.state, message: n.message ?? null })),
      ),
    ],
  )
  return toRun(rows[0] as Record<string, unknown>)
}

export async function getSyncRun(q: Queryable, id: number): Promise<SyncRunRow | undefined> {
  const { rows } = await q.query(`SELECT ${RUN_COLUMNS} FROM sync_runs WHERE id = $1`, [id])
  return rows[0] ? toRun(rows[0] as Record<string, unknown>) : undefined
}

/** The sync runs not finished, newest first: the one holding the lock, or ones a crash cut off. */
export async function listUnfinishedSyncRuns(q: Queryable): Promise<SyncRunRow[]> {
  const { rows } = await q.query(
    `SELECT ${RUN_COLUMNS} FROM sync_runs WHERE status = 'running' AND kind = 'sync' ORDER BY id DESC LIMIT 20`,
  )
  return rows.map((r) => toRun(r as Record<string, unknown>))
}

export async function listSyncNodes(q: Queryable, runId: number): Promise<SyncNodeRow[]> {
  const { rows } = await q.query(
    `SELECT node_id, phase, state, code, message, tasks_ok, tasks_changed, tasks_failed, changes, applied_revision, agent_version
       FROM sync_run_nodes WHERE run_id = $1 ORDER BY (phase = 'canary') DESC, node_id`,
    [runId],
  )
  return rows.map((r) => ({
    nodeId: r.node_id as string,
    phase: r.phase as SyncPhase,
    state: r.state as NodeSyncState,
    code: (r.code as string | null) ?? null,
    message: (r.message as string | null) ?? null,
    tasksOk: r.tasks_ok as number,
    tasksChanged: r.tasks_changed as number,
    tasksFailed: r.tasks_failed as number,
    changes: r.changes as Record<string, string[]>,
    appliedRevision: (r.applied_revision as string | null) ?? null,
    agentVersion: (r.agent_version as string | null) ?? null,
  }))
}

export interface NodeResultUpdate {
  state: NodeSyncState
  phase?: SyncPhase
  code?: string | null
  message?: string | null
  tasksOk?: number
  tasksChanged?: number
  tasksFailed?: number
  changes?: Record<string, string[]>
  appliedRevision?: string | null
  agentVersion?: string | null
}

/** One node's state in a run; `running` stamps its start, a final state its end. */
export async function setSyncNode(q: Queryable, runId: number, nodeId: string, u: NodeResultUpdate): Promise<void> {
  const final = u.state !== 'pending' && u.state !== 'running'
  await q.query(
    `UPDATE sync_run_nodes SET state = $3, phase = COALESCE($4, phase), code = $5, message = $6,
            tasks_ok = COALESCE($7, tasks_ok), tasks_changed = COALESCE($8, tasks_changed), tasks_failed = COALESCE($9, tasks_failed),
            changes = COALESCE($10, changes), applied_revision = COALESCE($11, applied_revision), agent_version = COALESCE($12, agent_version),
            started_at = CASE WHEN $3 = 'running' THEN now() ELSE started_at END,
            finished_at = CASE WHEN $13 THEN now() ELSE NULL END
      WHERE run_id = $1 AND node_id = $2`,
    [
      runId,
      nodeId,
      u.state,
      u.phase ?? null,
      u.code ?? null,
      u.message?.slice(0, 2000) ?? null,
      u.tasksOk ?? null,
      u.tasksChanged ?? null,
      u.tasksFailed ?? null,
      u.changes === undefined ? null : JSON.stringify(u.changes),
      u.appliedRevision ?? null,
      u.agentVersion ?? null,
      final,
    ],
  )
}

export async function setSyncAnsiblePid(q: Queryable, runId: number, pid: number | null): Promise<void> {
  await q.query('UPDATE sync_runs SET ansible_pid = $2 WHERE id = $1', [runId, pid])
}

/** A resumed run: this process now owns it, and a run that had finished with nodes left over is open again. */
export async function resumeSyncRun(q: Queryable, runId: number, pid: number, startedBy: string): Promise<void> {
  await q.query(
    `UPDATE sync_runs SET pid = $2, started_by = $3, ansible_pid = NULL, resumed_at = now(), attempts = attempts + 1,
            status = 'running', outcome = NULL, finished_at = NULL
      WHERE id = $1`,
    [runId, pid, startedBy],
  )
}

export async function finishSyncRun(q: Queryable, runId: number, outcome: SyncOutcome): Promise<void> {
  await q.query(
    "UPDATE sync_runs SET status = 'finished', outcome = $2, finished_at = now(), ansible_pid = NULL WHERE id = $1",
    [runId, outcome],
  )
}

/** The revision of the last sync (without --limit or --tags: the whole revision) that converged every node it targeted (what `validate --since applied` reads). */
export async function lastAppliedRevision(
  q: Queryable,
): Promise<{ runId: number; revision: string; finishedAt: Date } | undefined> {
  const { rows } = await q.query<{ id: string; revision: string; finished_at: Date }>(
    `SELECT id, revision, finished_at FROM sync_runs
      WHERE kind = 'sync' AND outcome = 'converged' AND revision IS NOT NULL AND plan ->> 'limited' = 'false' AND plan -> 'tags' = '[]'::jsonb
      ORDER BY finished_at DESC, id DESC LIMIT 1`,
  )
  const r = rows[0]
  return r ? { runId: Number(r.id), revision: r.revision, finishedAt: r.finished_at } : undefined
}

/** Whether a finished sync already converged this content everywhere (so the canary phase proves nothing new). */
export async function contentConvergedBefore(q: Queryable, contentHash: string): Promise<boolean> {
  const { rows } = await q.query(
    "SELECT 1 FROM sync_runs WHERE kind = 'sync' AND outcome = 'converged' AND plan ->> 'contentHash' = $1 AND plan ->> 'limited' = 'false' LIMIT 1",
    [contentHash],
  )
  return rows.length > 0
}

export interface LastFinishedSync {
  runId: number
  outcome: SyncOutcome
  finishedAt: Date
  /** How many of its nodes ended in each state. */
  nodes: Partial<Record<NodeSyncState, number>>
}

/** The latest `fleetkit sync` run that finished (dry runs and drift checks are not syncs), with its node states counted: what /metrics shows. */
export async function lastFinishedSync(q: Queryable): Promise<LastFinishedSync | undefined> {
  const { rows } = await q.query<{
    id: string
    outcome: SyncOutcome
    finished_at: Date
    nodes: Record<string, number>
  }>(
    `SELECT r.id, r.outcome, r.finished_at,
            (SELECT COALESCE(jsonb_object_agg(s.state, s.n), '{}'::jsonb)
               FROM (SELECT state, count(*) AS n FROM sync_run_nodes WHERE run_id = r.id GROUP BY state) s) AS nodes
       FROM sync_runs r
      WHERE r.kind = 'sync' AND r.status = 'finished' AND r.outcome IS NOT NULL
      ORDER BY r.finished_at DESC, r.id DESC LIMIT 1`,
  )
  const r = rows[0]
  return r ? { runId: Number(r.id), outcome: r.outcome, finishedAt: r.finished_at, nodes: r.nodes } : undefined
}
