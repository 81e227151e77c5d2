// What store functions run their statements on, and the one way to run them in a transaction.
// A module of its own, below database.ts: migrate.ts uses both, and openDatabase uses migrate.ts.
import type pg from 'pg'

/** What every store function takes: a pool or a checked-out client (inside a transaction). */
export type Queryable = Pick<pg.Pool, 'query'>

/**
 * The state database as every layer above the store holds it: opened by a command (or the gateway),
 * handed down, and given to store functions. Only src/store runs statements on it (the layer test
 * refuses `pg` and `.query(` anywhere else), so every statement of fleetkit is in this folder.
 */
export type StatePool = pg.Pool

/** One checked-out connection inside withTransaction (or a session the store opened), for store functions. */
export type StateTransaction = pg.PoolClient

export interface TransactionOptions {
  isolation?: 'read committed' | 'repeatable read' | 'serializable'
}

/**
 * Run `fn` in one transaction on one checked-out client: COMMIT when it resolves,
 * ROLLBACK when it throws (the error is rethrown), the client released either way.
 */
export async function withTransaction<T>(
  pool: StatePool,
  fn: (client: StateTransaction) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const client = await pool.connect()
  let broken: Error | undefined
  try {
    await client.query(options.isolation ? `BEGIN ISOLATION LEVEL ${options.isolation.toUpperCase()}` : 'BEGIN')
    const result = await fn(client)
    await client.query('COMMIT')
    return result
  } catch (error) {
    try {
      await client.query('ROLLBACK')
    } catch (rollbackError) {
      // A client that cannot roll back is not returned to the pool.
      broken = rollbackError as Error
    }
    throw error
  } finally {
    client.release(broken)
  }
}

/**
 * Run `fn` on one checked-out connection of its own, outside a transaction: for what is bound to a
 * session (a session advisory lock, pg_backup_start/stop). A connection that failed under `fn` may
 * still hold session state, so it is closed rather than handed back to the pool.
 */
export async function withSession<T>(pool: StatePool, fn: (session: StateTransaction) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  let broken: Error | undefined
  try {
    return await fn(client)
  } catch (error) {
    broken = error as Error
    throw error
  } finally {
    client.release(broken)
  }
}
