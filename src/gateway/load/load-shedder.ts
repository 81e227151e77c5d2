// Load shedding (issue 12, item 7): before the gateway overloads, it answers 503 GATEWAY_OVERLOADED
// with Retry-After instead of queueing work it cannot finish in time. Enrollment goes first, heartbeats and renewals last.
import { monitorEventLoopDelay } from 'node:perf_hooks'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Logger } from '../../log/logger.js'

/** Which requests go first when the gateway is busy: `first` (enrollment, recovery), `last` (heartbeats, renewals, /healthz). */
export type ShedPriority = 'first' | 'normal' | 'last'

/** 0: nothing shed; 1: `first` shed; 2: `first` and `normal`; 3: everything. */
export type LoadLevel = 0 | 1 | 2 | 3

export interface LoadShedderTuning {
  /** Event-loop delay (ms, p99 over one sample) at which each level begins: [level 1, level 2, level 3]. */
  delayThresholdsMs: readonly [number, number, number]
  /** A level is left only after this many samples in a row below half of its threshold (hysteresis). */
  calmSamples: number
  /** How often the delay is sampled. */
  sampleMs: number
  /** Requests in progress at most on each listener; `first` may use half of it, `normal` 80%, `last` all. */
  maxInFlight: { enroll: number; agent: number }
}

export const DEFAULT_LOAD_SHEDDER_TUNING: LoadShedderTuning = {
  // A reconnect storm's handshakes alone push the p99 past 100 ms on 2 cores; enrollment waits from 150 ms,
  // heartbeats (already paid for by their handshake, cheap to answer) only when the loop is seconds behind.
  delayThresholdsMs: [150, 500, 2000],
  calmSamples: 3,
  sampleMs: 500,
  maxInFlight: { enroll: 256, agent: 4096 },
}

/** Share of a listener's in-flight limit each priority may fill: the rest is kept for the cheaper, more important requests. */
const IN_FLIGHT_SHARE: Record<ShedPriority, number> = { first: 0.5, normal: 0.8, last: 1 }
/** The lowest load level that sheds each priority. */
const SHED_FROM_LEVEL: Record<ShedPriority, LoadLevel> = { first: 1, normal: 2, last: 3 }
/** Seconds an agent is told to wait (it adds its own jitter); expensive work waits longer. */
const OVERLOAD_RETRY_AFTER_SECONDS: Record<ShedPriority, number> = { first: 10, normal: 5, last: 2 }

type ShedReason = 'event_loop_delay' | 'in_flight'
export type ListenerName = 'enroll' | 'agent' | 'operator'

export interface LoadShedderOptions {
  tuning: LoadShedderTuning
  /**
   * The event-loop delay now, in ms (injected by tests; default: perf_hooks monitorEventLoopDelay,
   * the p99 since the previous sample).
   */
  delayMs?: () => number
  /** Told when the level changes (one log line per change, not one per shed request). */
  onLevel?: (level: LoadLevel, previous: LoadLevel, delayMs: number) => void
  onShed?: (listener: ListenerName, priority: ShedPriority, reason: ShedReason) => void
}

export class LoadShedder {
  private currentLevel: LoadLevel = 0
  private calm = 0
  private timer: ReturnType<typeof setInterval> | undefined
  private readonly inFlight: Record<ListenerName, number> = { enroll: 0, agent: 0, operator: 0 }
  private readonly delayMs: () => number
  private readonly histogram: ReturnType<typeof monitorEventLoopDelay> | undefined

  constructor(private readonly options: LoadShedderOptions) {
    if (options.delayMs) {
      this.delayMs = options.delayMs
    } else {
      const histogram = monitorEventLoopDelay({ resolution: 10 })
      this.histogram = histogram
      this.delayMs = () => {
        // Nanoseconds; the histogram's floor is its resolution, so an idle loop reads about 10 ms.
        const p99 = histogram.count > 0 ? histogram.percentile(99) / 1e6 : 0
        histogram.reset()
        return p99
      }
    }
  }

  start(): void {
    this.histogram?.enable()
    this.timer = setInterval(() => this.sample(), this.options.tuning.sampleMs)
    this.timer.unref()
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    this.histogram?.disable()
  }

  get level(): LoadLevel {
    return this.currentLevel
  }

  inFlightOf(listener: ListenerName): number {
    return this.inFlight[listener]
  }

  /**
   * Read the delay once and move the level: up at once when a threshold is crossed, down one step
   * only after `calmSamples` samples below half of the current level's threshold.
   */
  sample(): LoadLevel {
    const delay = this.delayMs()
    const thresholds = this.options.tuning.delayThresholdsMs
    let target: LoadLevel = 0
    for (let i = thresholds.length - 1; i >= 0; i--) {
      if (delay >= thresholds[i]!) {
        target = (i + 1) as LoadLevel
        break
      }
    }
    const previous = this.currentLevel
    if (target > previous) {
      this.currentLevel = target
      this.calm = 0
    } else if (previous > 0 && delay < thresholds[previous - 1]! / 2) {
      this.calm++
      if (this.calm >= this.options.tuning.calmSamples) {
        this.currentLevel = (previous - 1) as LoadLevel
        this.calm = 0
      }
    } else {
      this.calm = 0
    }
    if (this.currentLevel !== previous) this.options.onLevel?.(this.currentLevel, previous, delay)
    return this.currentLevel
  }

  /**
   * Admit a request or throw GATEWAY_OVERLOADED (503 + Retry-After). An admitted request must call
   * the returned release exactly once when its answer is sent.
   */
  admit(listener: ListenerName, priority: ShedPriority): () => void {
    let reason: ShedReason | undefined
    if (this.currentLevel >= SHED_FROM_LEVEL[priority]) reason = 'event_loop_delay'
    else if (
      listener !== 'operator' &&
      this.inFlight[listener] >=
        Math.max(1, Math.floor(this.options.tuning.maxInFlight[listener] * IN_FLIGHT_SHARE[priority]))
    )
      reason = 'in_flight'
    if (reason) {
      this.options.onShed?.(listener, priority, reason)
      throw overloaded(priority, reason)
    }
    this.inFlight[listener]++
    let released = false
    return () => {
      if (released) return
      released = true
      this.inFlight[listener]--
    }
  }
}

/** What each load level sheds, for the log line an operator reads. */
const SHED_DESCRIPTION: Record<LoadLevel, string> = {
  0: 'nothing',
  1: 'enrollment and recovery',
  2: 'enrollment, recovery, leases and job reports',
  3: 'every request, heartbeats and renewals too',
}

/** One log line per level change: warn going up, info coming down. */
export function logLevelChange(logger: Logger): NonNullable<LoadShedderOptions['onLevel']> {
  return (level, previous, delayMs) =>
    logger(level > previous ? 'warn' : 'info', 'load_level_changed', {
      level,
      previous,
      event_loop_delay_ms: Math.round(delayMs),
      shedding: SHED_DESCRIPTION[level],
    })
}

function overloaded(priority: ShedPriority, reason: ShedReason): FleetkitError {
  const retryAfterSeconds = OVERLOAD_RETRY_AFTER_SECONDS[priority]
  const why = reason === 'in_flight' ? 'too many requests are in progress' : 'its event loop is falling behind'
  return new FleetkitError(
    'GATEWAY_OVERLOADED',
    `the gateway is shedding load (${why}); nothing was done, retry after ${retryAfterSeconds} s`,
    {
      data: { retryAfterSeconds, reason, priority, body: { reason } },
    },
  )
}
