// `fleetkit reconcile`'s own state (migration 0017): the stop a failed run leaves until a person clears
// it, and the sync runs it started lately (its hourly budget is counted from the ledger, so a restart
// does not reset it). The reconcile lock key lives here beside the sync lock's.
import type { Queryable } from '../database.js'

/** Held (session level) by the one `fleetkit reconcile` running against this fleet's state. */
export const RECONCILE_LOCK_KEY = 7_020_865_411

export interface ReconcileStop {
  id: number
  runId: number | null
  code: string
  message: string
  nodes: string[]
  stoppedAt: Date
}

const STOP_COLUMNS = 'id, run_id, code, message, nodes, stopped_at'

function toStop(r: Record<string, unknown>): ReconcileStop {
  return {
    id: Number(r.id),
    runId: r.run_id === null ? null : Number(r.run_id),
    code: r.code as string,
    message: r.message as string,
    nodes: r.nodes as string[],
    stoppedAt: r.stopped_at as Date,
  }
}

/** The stop not cleared yet, if there is one (at most one: a unique index). */
export async function openReconcileStop(q: Queryable): Promise<ReconcileStop | undefined> {
  const { rows } = await q.query(`SELECT ${STOP_COLUMNS} FROM reconcile_stops WHERE cleared_at IS NULL`)
  return rows[0] ? toStop(rows[0] as Record<string, unknown>) : undefined
}

/** Opens the stop; when one is open already, that one is kept and returned. */
export async function recordReconcileStop(
  q: Queryable,
  stop: { runId: number | null; code: string; message: string; nodes: readonly string[] },
): Promise<ReconcileStop> {
  const { rows } = await q.query(
    `INSERT INTO reconcile_stops (run_id, code, message, nodes) VALUES ($1, $2, $3, $4)
     ON CONFLICT ((true)) WHERE cleared_at IS NULL DO NOTHING RETURNING ${STOP_COLUMNS}`,
    [stop.runId, stop.code, stop.message.slice(0, 2000), [...stop.nodes]],
  )
  if (rows[0]) return toStop(rows[0] as Record<string, unknown>)
  return (await openReconcileStop(q))!
}

/** Clears the open stop; the stop it cleared, or undefined when none was open. */
export async function clearReconcileStop(q: Queryable, clearedBy: string): Promise<ReconcileStop | undefined> {
  const { rows } = await q.query(
    `UPDATE reconcile_stops SET cleared_at = now(), cleared_by = $1 WHERE cleared_at IS NULL RETURNING ${STOP_COLUMNS}`,
    [clearedBy],
  )
  return rows[0] ? toStop(rows[0] as Record<string, unknown>) : undefined
}

/** When each applying sync run `startedBy` began at or after `since` started, oldest first. */
export async function syncRunsStartedSince(q: Queryable, startedBy: string, since: Date): Promise<Date[]> {
  const { rows } = await q.query<{ started_at: Date }>(
    `SELECT started_at FROM sync_runs WHERE kind = 'sync' AND started_by = $1 AND started_at >= $2 ORDER BY started_at`,
    [startedBy, since],
  )
  return rows.map((r) => r.started_at)
}
