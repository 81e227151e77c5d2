// The sweep leader's lease: one row, its expiry set from the database's now(), so no gateway's
// clock decides who sweeps. Claiming is one upsert: a holder renews its own lease, anyone else
// takes it only when it expired; of gateways claiming at once, the row lock lets exactly one win.
// Every claim also records the thresholds its holder judges silence with (migration 0020), which
// `fleetkit sweep` by hand judges with too.
import type { Queryable } from '../database.js'

/** The silence a sweep judges by (src/lifecycle/node/thresholds.ts SweepThresholds, which the store cannot import). */
export interface LeaseThresholds {
  unhealthyAfterSeconds: number
  lostAfterSeconds: number
}

export interface SweepLeaseClaim {
  /** This holder holds the lease now (until `expiresAt`). */
  leading: boolean
  /** It was someone else's (or nobody's) before this claim. */
  acquired: boolean
  /**
   * Who held it before this claim (another holder, or this one renewing), how long ago its lease expired or
   * was released (negative: not yet), and how long ago it was last renewed (seconds): the last the database
   * heard of any sweeping gateway. Also for a renewal: a holder frozen (SIGSTOP, a paused VM) renews late.
   */
  previous?: { holder: string; expiredSeconds: number; renewedSeconds: number }
  expiresAt?: Date
}

export async function claimSweepLease(
  q: Queryable,
  holder: string,
  ttlMs: number,
  thresholds: LeaseThresholds,
): Promise<SweepLeaseClaim> {
  const { rows } = await q.query<{
    expires_at: Date
    prev_holder: string | null
    prev_expired: string | null
    prev_renewed: string | null
  }>(
    `WITH prev AS (SELECT holder, expires_at, renewed_at FROM sweep_leader WHERE id = 1),
     up AS (
       INSERT INTO sweep_leader AS l (id, holder, acquired_at, renewed_at, expires_at, unhealthy_after_seconds, lost_after_seconds)
       VALUES (1, $1, now(), now(), now() + make_interval(secs => $2::double precision / 1000), $3, $4)
       ON CONFLICT (id) DO UPDATE SET
         holder = EXCLUDED.holder,
         acquired_at = CASE WHEN l.holder = EXCLUDED.holder THEN l.acquired_at ELSE now() END,
         renewed_at = now(),
         expires_at = EXCLUDED.expires_at,
         unhealthy_after_seconds = EXCLUDED.unhealthy_after_seconds,
         lost_after_seconds = EXCLUDED.lost_after_seconds
       WHERE l.holder = EXCLUDED.holder OR l.expires_at <= now()
       RETURNING l.expires_at
     )
     SELECT up.expires_at, prev.holder AS prev_holder, extract(epoch FROM now() - prev.expires_at) AS prev_expired,
            extract(epoch FROM now() - prev.renewed_at) AS prev_renewed
       FROM up LEFT JOIN prev ON true`,
    [holder, ttlMs, thresholds.unhealthyAfterSeconds, thresholds.lostAfterSeconds],
  )
  const row = rows[0]
  if (!row) return { leading: false, acquired: false }
  const acquired = row.prev_holder !== holder
  return {
    leading: true,
    acquired,
    expiresAt: row.expires_at,
    ...(row.prev_holder !== null
      ? {
          previous: {
            holder: row.prev_holder,
            expiredSeconds: Number(row.prev_expired),
            renewedSeconds: Number(row.prev_renewed),
          },
        }
      : {}),
  }
}

/** A clean stop hands the lease on at once: the next claim of any other gateway takes it. */
export async function releaseSweepLease(q: Queryable, holder: string): Promise<void> {
  await q.query(`UPDATE sweep_leader SET expires_at = renewed_at + interval '1 microsecond' WHERE holder = $1`, [
    holder,
  ])
}

export interface SweepLease {
  holder: string
  acquiredAt: Date
  /** Its last claim or renewal: when its thresholds were last recorded. */
  renewedAt: Date
  expiresAt: Date
  /** The database's now() when read: compare expiresAt with this, not with a local clock. */
  readAt: Date
  /** What its holder judges with; absent when no gateway that records them claimed it since migration 0020. */
  thresholds?: LeaseThresholds
}

export async function readSweepLease(q: Queryable): Promise<SweepLease | undefined> {
  const { rows } = await q.query<{
    holder: string
    acquired_at: Date
    renewed_at: Date
    expires_at: Date
    now: Date
    unhealthy_after_seconds: number | null
    lost_after_seconds: number | null
  }>(
    `SELECT holder, acquired_at, renewed_at, expires_at, now(), unhealthy_after_seconds, lost_after_seconds
       FROM sweep_leader WHERE id = 1`,
  )
  const row = rows[0]
  if (!row) return undefined
  return {
    holder: row.holder,
    acquiredAt: row.acquired_at,
    renewedAt: row.renewed_at,
    expiresAt: row.expires_at,
    readAt: row.now,
    ...(row.unhealthy_after_seconds !== null && row.lost_after_seconds !== null
      ? {
          thresholds: { unhealthyAfterSeconds: row.unhealthy_after_seconds, lostAfterSeconds: row.lost_after_seconds },
        }
      : {}),
  }
}
