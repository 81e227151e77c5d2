// The gateway's sweeper: every sweepIntervalMs, the one gateway holding the leader lock (a
// session advisory lock on a connection it keeps) runs the sweep it was given; the others wait.
import type pg from 'pg'

import type { Logger } from '../log/logger.js'
import { releaseAdvisoryLock, SWEEP_LEADER_KEY, tryAdvisoryLock } from '../store/sweep.js'
import type { LifecycleMetrics } from './lifecycle-metrics.js'

/** What the gateway needs of a sweep (src/lifecycle/sweep.ts runSweep with its thresholds bound). */
interface SweepOutcome {
  swept: boolean
  unhealthy: { nodeId: string }[]
  lost: { nodeId: string; fencedJobs: number; releasedAllocations: number }[]
  durationMs: number
}
export type SweepFunction = (pool: pg.Pool) => Promise<SweepOutcome>

export type SweepTick = 'swept' | 'busy' | 'not_leader' | 'failed'

export class Sweeper {
  private leader: pg.PoolClient | undefined
  private timer: NodeJS.Timeout | undefined
  private running: Promise<SweepTick> | undefined
  private stopped = false

  constructor(
    private readonly options: {
      pool: pg.Pool
      sweep: SweepFunction
      intervalMs: number
      logger: Logger
      metrics: LifecycleMetrics
    },
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.options.intervalMs)
    this.timer.unref()
  }

  get isLeader(): boolean {
    return this.leader !== undefined
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
        })
      }
      for (const node of outcome.unhealthy) logger('warn', 'node_unhealthy', { node_id: node.nodeId })
      return 'swept'
    } catch (error) {
      metrics.sweeps.inc({ outcome: 'failed' })
      logger('error', 'sweep_failed', { error: (error as Error).message, retry: 'next interval' })
      this.dropLeadership(error as Error)
      return 'failed'
    }
  }

  /** Become (or stay) the leader: the lock lives as long as this connection, so a dead gateway frees it. */
  private async lead(): Promise<boolean> {
    if (this.leader) return true
    const client = await this.options.pool.connect()
    try {
      if (await tryAdvisoryLock(client, SWEEP_LEADER_KEY)) {
        this.leader = client
        client.on('error', (error) => this.dropLeadership(error))
        this.options.logger('info', 'sweep_leader', { leader: true })
        return true
      }
    } catch (error) {
      client.release(error as Error)
      throw error
    }
    client.release()
    return false
  }

  private dropLeadership(error?: Error): void {
    const client = this.leader
    this.leader = undefined
    // Destroyed, not returned: a pooled connection must not carry the leader lock to someone else.
    client?.release(error ?? true)
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearInterval(this.timer)
    await this.running?.catch(() => undefined)
    const client = this.leader
    this.leader = undefined
    if (!client) return
    try {
      await releaseAdvisoryLock(client, SWEEP_LEADER_KEY)
      client.release()
    } catch (error) {
      client.release(error as Error)
    }
  }
}
