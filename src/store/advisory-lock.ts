// Session-level advisory locks: held by the connection that took them until it lets go or ends, so a
// crashed holder frees its lock with its connection. `fleetkit sync` and `fleetkit sweep` hold one each.
import type { Queryable } from './database.js'

/** Takes the lock if nobody holds it; false at once when another session does. */
export async function tryAdvisoryLock(q: Queryable, key: number): Promise<boolean> {
  const { rows } = await q.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [key])
  return rows[0]!.ok
}

export async function releaseAdvisoryLock(q: Queryable, key: number): Promise<void> {
  await q.query('SELECT pg_advisory_unlock($1)', [key])
}
