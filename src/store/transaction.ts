// What store functions run their statements on, and the one way to run them in a transaction.
// A module of its own, below database.ts: migrate.ts uses both, and openDatabase uses migrate.ts.
import type pg from 'pg'

/** What every store function takes: a pool or a checked-out client (inside a transaction). */
export type Queryable = Pick<pg.Pool, 'query'>

export interface TransactionOptions {
  isolation?: 'read committed' | 'repeatable read' | 'serializable'
}

/**
 * Run `fn` in one transaction on one checked-out client: COMMIT when it resolves,
 * ROLLBACK when it throws (the error is rethrown), the client released either way.
 */
export async function withTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
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
