// The gateway's sweeper: every sweepIntervalMs, the one gateway holding the sweep lease (a row whose
// expiry the database's clock sets, src/store/nodes/sweep-leader.ts) runs the sweep it was given; the others
// try to take the lease at each tick and succeed only once it expired (its holder died, froze or lost
// the database) or was released (a clean stop). The holder renews it every third of its lifetime, and
// records with each claim the thresholds it judges with (`fleetkit sweep` by hand judges with them too).
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'

import type { StatePool } from '../store/transaction.js'

import { isConnectionError, isServerFailure } from '../checks/sqlstate.js'
import type { Logger } from '../log/logger.js'
import { recordSweepGap } from '../store/nodes/sweep-gaps.js'
import { claimSweepLease, type LeaseThresholds, releaseSweepLease } from '../store/nodes/sweep-leader.js'
import type { LifecycleMetrics } from './metrics/lifecycle-metrics.js'

/** What the gateway needs of a sweep (src/lifecycle/node/sweep.ts runSweep with its thresholds bound). */
interface SweepOutcome {
  swept: boolean
  unhealthy: { nodeId: string }[]
  lost: { nodeId: string; fencedJobs: number; releasedAllocations: number; strandedAllocations: number }[]
  resumed?: { nodeId: string; allocationIds: string[] }[]
  durationMs: number
}
export type SweepFunction = (pool: StatePool) => Promise<SweepOutcome>

/** A gateway's sweep: the function, and the thresholds bound into it, recorded with the lease. */
export interface GatewaySweep {
  run: SweepFunction
  thresholds: LeaseThresholds
}

export type SweepTick = 'swept' | 'busy' | 'not_leader' | 'failed'

export class Sweeper {
  /** This gateway in the lease row: host, PID and a random part (a restarted process is another holder). */
  readonly holder: string
  private leading = false
  /** When (local monotonic ms) the lease was last claimed or renewed. */
  private renewedAt = -Infinity
  private timer: NodeJS.Timeout | undefined
  private running: Promise<SweepTick> | undefined
  private stopped = false
  /** When (local monotonic ms) this gateway last reached its database while it could record heartbeats. */
  private observedAtMs: number
  /** Set while it cannot: from the last moment it could. Recorded as a sweep gap once it can again. */
  private unobservedSinceMs: number | undefined
  /** The lease this gateway took lay unclaimed this long (s) before: a gap to record before its first sweep. */
  private unclaimedSeconds: number | undefined

  constructor(
    private readonly options: {
      pool: StatePool
      sweep: SweepFunction
      /** The thresholds `sweep` judges with: recorded with each claim of the lease, for `fleetkit sweep`. */
      thresholds: LeaseThresholds
      intervalMs: number
      /** How long a lease lasts unrenewed: a dead leader's gateways take over after at most this (plus a tick). */
      leaseMs: number
      logger: Logger
      metrics: LifecycleMetrics
      holder?: string
      /** Local monotonic milliseconds (renewal pacing and the length of an outage; expiry is the database's). */
      nowMs?: () => number
      /** Whether the gateway's requests may use the database now (false: heartbeats are answered 503, unrecorded). */
      databaseAvailable?: () => boolean
    },
  ) {
    this.holder = options.holder ?? `${hostname().slice(0, 120)}:${process.pid}:${randomBytes(4).toString('hex')}`
    this.observedAtMs = this.nowMs()
  }

  private nowMs(): number {
    return (this.options.nowMs ?? (() => performance.now()))()
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.options.intervalMs)
    this.timer.unref()
  }

  get isLeader(): boolean {
    return this.leading
  }

  /** One tick now (tests; the timer calls it). Never two at once. */
  tick(): Promise<SweepTick> {
    this.running ??= this.once().finally(() => {
      this.running = undefined
    })
    return this.running
  }

  private async once(): Promise<SweepTick> {
    const { metrics, logger } = this.options
    if (this.stopped) return 'not_leader'
    const nowMs = this.nowMs()
    const observing = this.options.databaseAvailable?.() ?? true
    if (!observing) this.unobservedSinceMs ??= this.observedAtMs
    try {
      // While requests cannot use the database (it is gone, or so slow that they are shed), heartbeats are
      // answered 503 and recorded nowhere: no silence is judged until they are again.
      if (!observing) throw new Error('requests cannot use the database: heartbeats are not being recorded')
      await this.recordOutage(nowMs)
      const leading = await this.lead()
      // The database answered: until a later tick finds it gone, heartbeats were recorded up to here.
      this.observedAtMs = nowMs
      if (!leading) {
        metrics.sweeps.inc({ outcome: 'not_leader' })
        return 'not_leader'
      }
      if (this.unclaimedSeconds !== undefined) {
        // Kept until recorded: a failure here is retried at the next tick, before any sweep.
        await recordSweepGap(this.options.pool, this.unclaimedSeconds, 'no_sweeper')
        logger('info', 'sweep_gap', { reason: 'no_sweeper', seconds: Math.round(this.unclaimedSeconds) })
        this.unclaimedSeconds = undefined
      }
      const outcome = await this.options.sweep(this.options.pool)
      if (!outcome.swept) {
        metrics.sweeps.inc({ outcome: 'busy' })
        return 'busy'
      }
      metrics.sweeps.inc({ outcome: 'swept' })
      metrics.sweepSeconds.observe(outcome.durationMs / 1000)
      if (outcome.unhealthy.length > 0) metrics.reclamations.inc({ transition: 'unhealthy' }, outcome.unhealthy.length)
      if (outcome.lost.length > 0) metrics.reclamations.inc({ transition: 'lost' }, outcome.lost.length)
      for (const lost of outcome.lost) {
        metrics.fencedJobs.inc(lost.fencedJobs)
        metrics.releasedAllocations.inc(lost.releasedAllocations)
        logger('warn', 'node_lost', {
          node_id: lost.nodeId,
          fenced_jobs: lost.fencedJobs,
          released_allocations: lost.releasedAllocations,
          stranded_allocations: lost.strandedAllocations,
        })
      }
      for (const node of outcome.resumed ?? [])
        logger('info', 'allocations_resumed', { node_id: node.nodeId, allocations: node.allocationIds.length })
      for (const node of outcome.unhealthy) logger('warn', 'node_unhealthy', { node_id: node.nodeId })
      return 'swept'
    } catch (error) {
      // The database did not answer: neither did it record the heartbeats this gateway answered meanwhile.
      if (isConnectionError(error) || isServerFailure(error)) this.unobservedSinceMs ??= this.observedAtMs
      metrics.sweeps.inc({ outcome: 'failed' })
      logger('error', 'sweep_failed', { error: (error as Error).message, retry: 'next interval' })
      this.dropLeadership()
      return 'failed'
    }
  }

  /**
   * This gateway reaches its database again after it could not: the stretch is recorded (sweep-gaps.ts) before
   * any sweep judges silence across it. A failure leaves it to record at the next tick.
   */
  private async recordOutage(nowMs: number): Promise<void> {
    const since = this.unobservedSinceMs
    if (since !== undefined) {
      const seconds = (nowMs - since) / 1000
      await recordSweepGap(this.options.pool, seconds, 'database')
      this.unobservedSinceMs = undefined
      this.options.logger('info', 'sweep_gap', { reason: 'database', seconds: Math.round(seconds) })
    }
  }

  /**
   * Become (or stay) the leader. The holder renews every third of the lease; in between it sweeps on
   * its own word, which is safe: a sweep also takes the sweep lock (src/store/nodes/sweep.ts), so two never
   * run at once, and every statement of it re-checks what it changes.
   */
  private async lead(): Promise<boolean> {
    if (this.leading && this.nowMs() - this.renewedAt < this.options.leaseMs / 3) return true
    const claim = await claimSweepLease(this.options.pool, this.holder, this.options.leaseMs, this.options.thresholds)
    if (claim.leading) {
      this.renewedAt = this.nowMs()
      // Nobody swept for longer than a take-over takes: no gateway ran (one gateway restarted after a while, a
      // control host restored from a backup), or this one was frozen holding the lease (SIGSTOP, a paused VM, a
      // stalled process: it renews its own lease late), so none recorded heartbeats either. A holder renewing on
      // time, or a quick take-over, is well inside two leases. Recorded before this sweeps.
      const unclaimed = claim.previous?.renewedSeconds
      if (unclaimed !== undefined && unclaimed * 1000 > 2 * this.options.leaseMs) this.unclaimedSeconds = unclaimed
      if (!this.leading || claim.acquired)
        this.options.logger('info', 'sweep_leader', {
          leader: true,
          holder: this.holder,
          ...(claim.previous
            ? { previous_holder: claim.previous.holder, previous_expired_seconds: claim.previous.expiredSeconds }
            : {}),
        })
      this.leading = true
      return true
    }
    if (this.leading) this.options.logger('warn', 'sweep_leader', { leader: false, holder: this.holder })
    this.leading = false
    return false
  }

  private dropLeadership(): void {
    // The next tick claims again (a renewal if the lease is still ours).
    this.renewedAt = -Infinity
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearInterval(this.timer)
    await this.running?.catch(() => undefined)
    if (!this.leading) return
    this.leading = false
    // Handed on at once; if this fails, the lease expires by itself.
    await releaseSweepLease(this.options.pool, this.holder).catch(() => undefined)
  }
}
