// Heartbeats coalesced in memory and written in batches: the latest beat per node is
// kept, and one write transaction per interval carries them all (spec 05 "cheap heartbeats").
import { type Heartbeat, mergeHeartbeat } from '../../store/nodes/heartbeats.js'

export interface CoalescerOptions {
  /** Writes one batch; one transaction for the whole batch. */
  write: (batch: Heartbeat[]) => Promise<unknown>
  /** Time between batch writes (default 1000 ms). */
  intervalMs?: number
  onBatch?: (size: number) => void
  onError?: (error: unknown, size: number) => void
  /** Timer functions, injectable so tests drive flushes by hand. */
  setInterval?: (fn: () => void, ms: number) => { unref?(): void }
  clearInterval?: (handle: unknown) => void
}

export class HeartbeatCoalescer {
  private pending = new Map<string, Heartbeat>()
  private inFlight: Promise<void> | undefined
  private timer: { unref?(): void } | undefined
  private closed = false

  constructor(private readonly options: CoalescerOptions) {}

  start(): void {
    const every = this.options.setInterval ?? setInterval
    this.timer = every(() => void this.flush(), this.options.intervalMs ?? 1000)
    this.timer.unref?.()
  }

  /** Keep one beat per node, merged by the store's heartbeat rule (newest wins, facts carried). */
  add(beat: Heartbeat): void {
    if (this.closed) throw new Error('heartbeat coalescer is closed')
    this.pending.set(beat.nodeId, mergeHeartbeat(this.pending.get(beat.nodeId), beat))
  }

  get size(): number {
    return this.pending.size
  }

  /** Write what is pending as one batch. Never two writes at once: a flush during a flush waits for it. */
  async flush(): Promise<void> {
    if (this.inFlight) {
      await this.inFlight
      return
    }
    if (this.pending.size === 0) return
    const batch = [...this.pending.values()]
    this.pending = new Map()
    this.inFlight = (async () => {
      try {
        await this.options.write(batch)
        this.options.onBatch?.(batch.length)
      } catch (error) {
        // Put the beats back, merged with any that arrived meanwhile: they are retried next interval.
        for (const beat of batch) {
          const arrived = this.pending.get(beat.nodeId)
          this.pending.set(beat.nodeId, arrived ? mergeHeartbeat(beat, arrived) : beat)
        }
        this.options.onError?.(error, batch.length)
      } finally {
        this.inFlight = undefined
      }
    })()
    await this.inFlight
  }

  /** Stop the timer and write everything still pending (graceful shutdown). */
  async close(): Promise<void> {
    if (this.timer) (this.options.clearInterval ?? clearInterval)(this.timer as never)
    this.timer = undefined
    await this.flush()
    await this.flush()
    this.closed = true
  }
}
