// Whether the gateway's PostgreSQL answers: a periodic probe (sooner when a request saw a
// connection fail), the state /healthz reports, and a restart of the embedded server when it died.
import type { Logger } from '../log/logger.js'

export interface DatabaseHealthOptions {
  /** One round trip on a connection of its own (a busy pool is not a dead database). */
  probe: () => Promise<void>
  /** Start the database again (the embedded default); undefined for DATABASE_URL: someone else runs it. */
  restart?: () => Promise<void>
  intervalMs: number
  logger: Logger
  setTimer?: (fn: () => void, ms: number) => { unref?(): void }
  clearTimer?: (handle: unknown) => void
}

export class DatabaseHealth {
  private up = true
  private since = 0
  private checking: Promise<void> | undefined
  private timer: { unref?(): void } | undefined
  private stopped = true
  private probeFailures = 0

  constructor(private readonly options: DatabaseHealthOptions) {}

  /** Whether requests that need the database may run (false: answer 503 at once). */
  get available(): boolean {
    return this.up
  }

  start(): void {
    this.stopped = false
    this.schedule()
  }

  stop(): void {
    this.stopped = true
    if (this.timer) (this.options.clearTimer ?? clearTimeout)(this.timer as never)
    this.timer = undefined
  }

  /** A request's connection failed: stop sending requests to the database and look now. */
  reportFailure(error: unknown): void {
    if (this.up) this.markDown(error)
    void this.check()
  }

  /** Probe now (the timer does it every intervalMs); concurrent calls share one probe. */
  check(): Promise<void> {
    this.checking ??= this.probeOnce().finally(() => {
      this.checking = undefined
    })
    return this.checking
  }

  private async probeOnce(): Promise<void> {
    try {
      await this.options.probe()
      this.probeFailures = 0
      if (!this.up) {
        this.up = true
        this.options.logger('info', 'database_available', { down_ms: Date.now() - this.since })
      }
      return
    } catch (error) {
      this.probeFailures++
      // A slow probe on a loaded machine is not an outage: while requests succeed, it takes two
      // failed probes in a row (a request's own connection failure marks it down at once).
      if (this.up && this.probeFailures < 2) return
      if (this.up) this.markDown(error)
    }
    if (!this.options.restart) return
    this.options.logger('warn', 'database_restarting', { database: 'embedded' })
    try {
      await this.options.restart()
      await this.options.probe()
      this.up = true
      this.options.logger('info', 'database_available', { down_ms: Date.now() - this.since, restarted: true })
    } catch (error) {
      this.options.logger('error', 'database_restart_failed', {
        error: describe(error),
        retry_in_ms: this.options.intervalMs,
      })
    }
  }

  private markDown(error: unknown): void {
    this.up = false
    this.since = Date.now()
    this.options.logger('error', 'database_unavailable', {
      code: 'STATE_UNAVAILABLE',
      error: describe(error),
      retry_in_ms: this.options.intervalMs,
    })
  }

  private schedule(): void {
    if (this.stopped) return
    this.timer = (this.options.setTimer ?? setTimeout)(() => {
      void this.check().finally(() => this.schedule())
    }, this.options.intervalMs)
    this.timer.unref?.()
  }
}

function describe(error: unknown): string {
  const e = error as { code?: string; message?: string }
  // node-postgres messages name no password; the URL is never part of them.
  return e.code ? `${e.code}: ${e.message ?? ''}` : (e.message ?? String(error))
}
