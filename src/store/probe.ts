// One round trip to the database on a connection of its own, outside the pool: whether the
// server answers, not whether a pooled connection is free (the gateway's health check).
import type pg from 'pg'

export async function probeDatabase(pool: pg.Pool, timeoutMs: number): Promise<void> {
  const { default: pgModule } = await import('pg')
  const options = pool.options as pg.ClientConfig
  // pg-pool keeps the password out of the spread (a non-enumerable property): name it.
  const client = new pgModule.Client({
    ...options,
    password: options.password,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
  })
  client.on('error', () => undefined)
  try {
    await client.connect()
    await client.query('SELECT 1')
  } finally {
    await client.end().catch(() => undefined)
  }
}
