// Session-level advisory locks: held by the connection that took them until it lets go or ends, so a
// crashed holder frees its lock with its connection. `fleetkit sync` and `fleetkit sweep` hold one each,
// `fleetkit db restore` one it waits for.
import { type Queryable, type StatePool, type StateTransaction, withSession } from './transaction.js'

/** Takes the lock if nobody holds it; false at once when another session does. */
export async function tryAdvisoryLock(q: Queryable, key: number): Promise<boolean> {
  const { rows } = await q.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [key])
  return rows[0]!.ok
}

export async function releaseAdvisoryLock(q: Queryable, key: number): Promise<void> {
  await q.query('SELECT pg_advisory_unlock($1)', [key])
}

/**
 * Run `fn` holding session lock `key` on a connection of its own (the lock lives as long as that
 * session, so a crashed holder frees it): `{ locked: false }` at once when another session holds it.
 */
export async function withSessionLock<T>(
  pool: StatePool,
  key: number,
  fn: (session: StateTransaction) => Promise<T>,
): Promise<{ locked: true; value: T } | { locked: false }> {
  return withSession(pool, async (session) => {
    if (!(await tryAdvisoryLock(session, key))) return { locked: false as const }
    try {
      return { locked: true as const, value: await fn(session) }
    } finally {
      await releaseAdvisoryLock(session, key)
    }
  })
}

/**
 * Run `fn` holding session lock `key` on a connection of its own, waiting for it up to `waitMs`: a
 * holder that takes longer ends the wait with PostgreSQL's lock_timeout error (SQLSTATE 55P03).
 */
export async function withWaitedSessionLock<T>(
  pool: StatePool,
  key: number,
  waitMs: number,
  fn: (session: StateTransaction) => Promise<T>,
): Promise<T> {
  return withSession(pool, async (session) => {
    await session.query(`SET lock_timeout = ${Math.max(1, Math.round(waitMs))}`)
    await session.query('SELECT pg_advisory_lock($1)', [key])
    await session.query('RESET lock_timeout')
    try {
      return await fn(session)
    } finally {
      await releaseAdvisoryLock(session, key)
    }
  })
}
