// The gateway's sweeper: every sweepIntervalMs, the one gateway holding the sweep lease (a row whose
// expiry the database's clock sets, src/store/nodes/sweep-leader.ts) runs the sweep it was given; the others
// try to take the lease at each tick and succeed only once it expired (its holder died, froze or lost
// the database) or was released (a clean stop). The holder renews it every third of its lifetime.
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'

import type { StatePool } from '../store/transaction.js'

import type { Logger } from '../log/logger.js'
import { claimSweepLease, releaseSweepLease } from '../store/nodes/sweep-leader.js'
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

  constructor(
    private readonly options: {
      pool: StatePool
      sweep: SweepFunction
      intervalMs: number
      /** How long a lease lasts unrenewed: a dead leader's gateways take over after at most this (plus a tick). */
      leaseMs: number
      logger: Logger
      metrics: LifecycleMetrics
      holder?: string
      /** Local monotonic milliseconds (renewal pacing only; expiry is the database's). */
      nowMs?: () => number
    },
  ) {
    this.holder = options.holder ?? `${hostname().slice(0, 120)}:${process.pid}:${randomBytes(4).toString('hex')}`
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
    try {
      if (!(await this.lead())) {
        metrics.sweeps.inc({ outcome: 'not_leader' })
        return 'not_leader'
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
      metrics.sweeps.inc({ outcome: 'failed' })
      logger('error', 'sweep_failed', { error: (error as Error).message, retry: 'next interval' })
      this.dropLeadership()
      return 'failed'
    }
  }

  /**
   * Become (or stay) the leader. The holder renews every third of the lease; in between it sweeps on
   * its own word, which is safe: a sweep also takes the sweep lock (src/store/nodes/sweep.ts), so two never
   * run at once, and every statement of it re-checks what it changes.
   */
  private async lead(): Promise<boolean> {
    const nowMs = this.options.nowMs ?? (() => performance.now())
    if (this.leading && nowMs() - this.renewedAt < this.options.leaseMs / 3) return true
    const claim = await claimSweepLease(this.options.pool, this.holder, this.options.leaseMs)
    if (claim.leading) {
      this.renewedAt = nowMs()
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
