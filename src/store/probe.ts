// One round trip to the database on a connection of its own, outside the pool: whether the
// server answers, not whether a pooled connection is free (the gateway's health check).
//
// The connection is kept between probes. A new one every probe (every 2 s) was a backend forked and
// authenticated each time: CPU on both sides, and a line in the server's log where log_connections is on.
// A kept connection proves less (that the server answers, not that it accepts connections), so a probe
// asked to be `fresh` (a request's connection just failed, or the database is already judged down)
// connects anew; so does any probe whose kept connection fails, before it counts as a failure.
import type pg from 'pg'

/** How the probe's connection shows in pg_stat_activity. */
export const PROBE_APPLICATION_NAME = 'fleetkit-gateway-probe'

export class DatabaseProbe {
  private kept: pg.Client | undefined
  private closed = false

  constructor(
    private readonly pool: pg.Pool,
    private readonly timeoutMs: number,
  ) {}

  /** Resolves when the server answered `SELECT 1`; rejects with the error of a fresh connection's attempt. */
  async probe(options: { fresh?: boolean } = {}): Promise<void> {
    const kept = this.kept
    if (kept && !options.fresh) {
      try {
        await kept.query('SELECT 1')
        return
      } catch {
        // Ended by the server (a restart, idle_session_timeout, pg_terminate_backend): a fresh one decides.
      }
    }
    if (kept) this.drop(kept)
    const client = await this.connect()
    if (this.closed) void client.end().catch(() => undefined)
    else this.kept = client
  }

  /** Ends the kept connection; later probes connect and end each connection at once. */
  async close(): Promise<void> {
    this.closed = true
    const kept = this.kept
    this.kept = undefined
    await kept?.end().catch(() => undefined)
  }

  private drop(client: pg.Client): void {
    if (this.kept === client) this.kept = undefined
    void client.end().catch(() => undefined)
  }

  /** A new connection that answered `SELECT 1`; ended again when it did not. */
  private async connect(): Promise<pg.Client> {
    const { default: pgModule } = await import('pg')
    const options = this.pool.options as pg.ClientConfig
    // pg-pool keeps the password out of the spread (a non-enumerable property): name it.
    const client = new pgModule.Client({
      ...options,
      password: options.password,
      application_name: PROBE_APPLICATION_NAME,
      connectionTimeoutMillis: this.timeoutMs,
      query_timeout: this.timeoutMs,
    })
    // A kept connection the server ends between probes emits 'error': the next probe finds out.
    client.on('error', () => undefined)
    try {
      await client.connect()
      await client.query('SELECT 1')
      return client
    } catch (error) {
      await client.end().catch(() => undefined)
      throw error
    }
  }
}
