// Whether the gateway's PostgreSQL answers: a periodic probe (sooner when a request saw a
// connection fail), the state /healthz reports, and a restart of the embedded server when it died
// (after a restart that failed, the next waits: doubling from intervalMs up to 30 s).
//
// A probe that times out is not a dead server: under CPU load or descriptor exhaustion a healthy
// postmaster answers late, and restarting it turns a slow moment into seconds of 503s. So the
// embedded server is restarted only when its postmaster is gone (the PID in postmaster.pid is not a
// live postgres process); a live one that does not answer is load, shed with 503 + Retry-After.
import type { Logger } from '../../log/logger.js'

/** The embedded server the gateway may restart (undefined for DATABASE_URL: someone else runs it). */
export interface EmbeddedDatabase {
  /** The live postmaster's PID, or undefined when it is gone (no postmaster.pid, or its PID is dead or reused). */
  livePostmaster: () => Promise<number | undefined>
  /** Start the server again. */
  restart: () => Promise<void>
}

export interface DatabaseHealthOptions {
  /**
   * One round trip on a connection of its own (a busy pool is not a dead database). `fresh`: on a new
   * connection, not a kept one (a request's connection failed, or the database is judged down already).
   */
  probe: (options: { fresh: boolean }) => Promise<void>
  embedded?: EmbeddedDatabase
  intervalMs: number
  logger: Logger
  setTimer?: (fn: () => void, ms: number) => { unref?(): void }
  clearTimer?: (handle: unknown) => void
  /** Milliseconds now (Date.now by default): the outage's length, and when the next restart may be tried. */
  now?: () => number
}

/** The longest wait between two restarts that failed (a full disk can last until a person frees space). */
const MAX_RESTART_DELAY_MS = 30_000

/** What the log said about the current outage: a live server that is slow, or one that is unavailable. */
type Announced = 'database_slow' | 'database_unavailable'

export class DatabaseHealth {
  private up = true
  private since = 0
  private checking: Promise<void> | undefined
  private timer: { unref?(): void } | undefined
  private stopped = true
  private probeFailures = 0
  private announced: Announced | undefined
  /** After a failed restart: how long until the next may be tried (doubling), and when that is. */
  private restartDelayMs = 0
  private nextRestartAt = 0

  constructor(private readonly options: DatabaseHealthOptions) {}

  private now(): number {
    return (this.options.now ?? Date.now)()
  }

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

  /**
   * A request's connection failed: stop sending requests to the database and look now. What it was
   * (slow or gone) is logged once the probe and the postmaster's PID have said.
   */
  reportFailure(error: unknown): void {
    if (this.up) this.markDown()
    void this.check(error)
  }

  /** Probe now (the timer does it every intervalMs); concurrent calls share one probe. */
  check(reported?: unknown): Promise<void> {
    this.checking ??= this.probeOnce(reported).finally(() => {
      this.checking = undefined
    })
    return this.checking
  }

  private async probeOnce(reported: unknown): Promise<void> {
    try {
      // While all is well a kept connection answers; anything amiss is judged on a new one.
      await this.options.probe({ fresh: reported !== undefined || !this.up || this.probeFailures > 0 })
      this.probeFailures = 0
      if (!this.up) this.markUp(false)
      return
    } catch (error) {
      this.probeFailures++
      // A slow probe on a loaded machine is not an outage: while requests succeed, it takes two
      // failed probes in a row (a request's own connection failure marks it down at once).
      if (this.up && this.probeFailures < 2) return
      if (this.up) this.markDown()
      await this.decide(reported ?? error)
    }
  }

  /** The database did not answer: a live postmaster is slow (shed, wait); a gone one is restarted. */
  private async decide(error: unknown): Promise<void> {
    const embedded = this.options.embedded
    // An unreadable postmaster.pid is no proof of death: only a restart that is needed is made.
    const pid = embedded ? await embedded.livePostmaster().catch(() => -1) : undefined
    const gone = embedded !== undefined && pid === undefined
    if (embedded && !gone) {
      this.announce('database_slow', 'warn', {
        code: 'STATE_UNAVAILABLE',
        error: describe(error),
        ...(pid !== undefined && pid > 0 ? { postmaster_pid: pid } : {}),
        action: 'shedding requests with 503 and Retry-After; the server runs, so it is not restarted',
        retry_in_ms: this.options.intervalMs,
      })
      return
    }
    this.announce('database_unavailable', 'error', {
      code: 'STATE_UNAVAILABLE',
      error: describe(error),
      retry_in_ms: this.options.intervalMs,
    })
    if (!embedded) return
    // Every failed query reports, and every report probes: without a wait, a server that cannot start
    // (its disk full until a person frees space) would be restarted and logged about once a second.
    if (this.now() < this.nextRestartAt) return
    this.options.logger('warn', 'database_restarting', { database: 'embedded', reason: 'postmaster_gone' })
    try {
      await embedded.restart()
      await this.options.probe({ fresh: true })
      this.probeFailures = 0
      this.markUp(true)
    } catch (restartError) {
      this.restartDelayMs = Math.min(
        this.restartDelayMs === 0 ? this.options.intervalMs : this.restartDelayMs * 2,
        Math.max(MAX_RESTART_DELAY_MS, this.options.intervalMs),
      )
      this.nextRestartAt = this.now() + this.restartDelayMs
      const code = (restartError as { code?: unknown }).code
      this.options.logger('error', 'database_restart_failed', {
        ...(typeof code === 'string' ? { code } : {}),
        error: describe(restartError),
        retry_in_ms: this.restartDelayMs,
      })
    }
  }

  /** Each kind of outage is logged once (a slow spell that turns into a dead server is logged again). */
  private announce(event: Announced, level: 'warn' | 'error', fields: Record<string, unknown>): void {
    if (this.announced === event) return
    this.announced = event
    this.options.logger(level, event, fields)
  }

  private markDown(): void {
    this.up = false
    this.since = this.now()
  }

  private markUp(restarted: boolean): void {
    this.up = true
    this.announced = undefined
    this.restartDelayMs = 0
    this.nextRestartAt = 0
    this.options.logger('info', 'database_available', {
      down_ms: this.now() - this.since,
      ...(restarted ? { restarted: true } : {}),
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
