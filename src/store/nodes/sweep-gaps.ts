// Stretches in which no gateway could record heartbeats (migration 0018): the sweep does not count them as
// a node's silence. A gateway records one when its database comes back after it could not reach it (every
// heartbeat it answered meanwhile was a 503), and the gateway that takes over an unclaimed sweep lease
// records the time since the lease's last renewal (no gateway ran: a single gateway restarted after a
// while, a control host restored from a backup). Without this, the first sweep after an outage longer
// than the lost threshold would find the whole fleet silent: every node lost, its jobs fenced and its
// allocations released, although the agents called all along.
import type { StatePool } from '../transaction.js'

import { withTransaction } from '../database.js'

export type GapReason = 'database' | 'no_sweeper'

/** Gaps older than this are dropped when another is recorded: no threshold of the sweep reaches that far. */
const KEPT_DAYS = 30

/**
 * Records the stretch from `seconds` before the database's now() until now, merged with any it overlaps
 * (two gateways that lost the same database record the same outage; each moment must count once).
 */
export async function recordSweepGap(pool: StatePool, seconds: number, reason: GapReason): Promise<void> {
  await withTransaction(pool, async (q) => {
    // Merging reads then writes: two recorders at once would each miss the other's row.
    await q.query('LOCK TABLE sweep_gaps IN SHARE ROW EXCLUSIVE MODE')
    await q.query(`DELETE FROM sweep_gaps WHERE ended_at < now() - make_interval(days => $1)`, [KEPT_DAYS])
    await q.query(
      `WITH new AS (SELECT now() - make_interval(secs => $1) AS s, now() AS e),
       merged AS (
         DELETE FROM sweep_gaps g USING new WHERE g.started_at <= new.e AND g.ended_at >= new.s
         RETURNING g.started_at, g.ended_at
       )
       INSERT INTO sweep_gaps (started_at, ended_at, reason)
       SELECT LEAST(new.s, min(m.started_at)), GREATEST(new.e, max(m.ended_at)), $2
         FROM new LEFT JOIN merged m ON true
        GROUP BY new.s, new.e`,
      [Math.max(0, seconds), reason],
    )
  })
}

/** The recorded gaps, oldest first (tests, and `fleetkit sweep --json` readers). */
export async function listSweepGaps(pool: StatePool): Promise<{ startedAt: Date; endedAt: Date; reason: GapReason }[]> {
  const { rows } = await pool.query<{ started_at: Date; ended_at: Date; reason: GapReason }>(
    'SELECT started_at, ended_at, reason FROM sweep_gaps ORDER BY started_at',
  )
  return rows.map((r) => ({ startedAt: r.started_at, endedAt: r.ended_at, reason: r.reason }))
}
