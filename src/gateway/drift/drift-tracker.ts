// Judges each heartbeat's drift digest without costing the heartbeat: the last verdict and the
// recorded fingerprint of each node are held in memory, so an unchanged digest is one comparison.
// The database is read when a digest changes the verdict or the held copy is old, written on a change.
import type { Logger } from '../../log/logger.js'
import type { DriftReport } from '../../protocol/drift-report.js'
import { type DriftVerdict, readDriftBaseline, recordDriftVerdict, sameDrift } from '../../store/nodes/node-drift.js'
import type { StatePool } from '../../store/transaction.js'
import { type JudgedBaseline, judgeDrift, judgedBaseline } from './drift-judge.js'

export interface DriftTrackerOptions {
  pool: StatePool
  logger: Logger
  /**
   * A held fingerprint is read again after `inSync` ms: a new sync's fingerprint shows within it. A
   * drifted or unknown node's after `notInSync` ms: the sync that ends it may leave the host's digest as it is.
   */
  reloadMs: { inSync: number; notInSync: number }
  /** Called with each verdict written (the change, not every heartbeat). */
  onWritten?: (verdict: DriftVerdict, event: string | null) => void
  /** Called at each read of a node's fingerprint (a changed digest or an old held copy, not every heartbeat). */
  onRead?: () => void
}

interface Held {
  baseline: JudgedBaseline | null
  readAtMs: number
  /** The verdict as stored. */
  verdict: Pick<DriftVerdict, 'state' | 'parts' | 'reason'>
  /** The report last judged: its digest and list, or why it had none. */
  reportKey: string
}

const reportKeyOf = (report: DriftReport) =>
  'digest' in report ? `${report.digest}/${report.keys_sha256}` : report.unavailable

export class DriftTracker {
  private readonly held = new Map<string, Held>()
  /** Nodes being judged now: a heartbeat that arrives meanwhile is not judged twice. */
  private readonly busy = new Set<string>()
  private readonly pending = new Set<Promise<void>>()
  /** After a failed judgement (the database away), the node's next try waits: one warning, not one a heartbeat. */
  private readonly retryAt = new Map<string, number>()

  constructor(private readonly options: DriftTrackerOptions) {}

  /**
   * Judge a heartbeat's report, in the background: the heartbeat's answer never waits for it, and a
   * database that is down costs the judgement (logged), never the heartbeat. An old agent's null is not judged.
   */
  observe(nodeId: string, report: DriftReport | null | undefined, now: Date): void {
    if (!report || this.busy.has(nodeId) || now.getTime() < (this.retryAt.get(nodeId) ?? 0)) return
    const held = this.held.get(nodeId)
    const key = reportKeyOf(report)
    if (held && held.reportKey === key && now.getTime() - held.readAtMs < this.maxAgeMs(held)) return
    this.busy.add(nodeId)
    const work = this.judge(nodeId, report, key, held, now)
      .then(() => {
        this.retryAt.delete(nodeId)
      })
      .catch((error: unknown) => {
        this.retryAt.set(nodeId, now.getTime() + this.options.reloadMs.notInSync)
        this.options.logger('warn', 'drift_judgement_failed', {
          node_id: nodeId,
          retry_in_ms: this.options.reloadMs.notInSync,
          error: error instanceof Error ? error.message : String(error),
        })
      })
      .finally(() => {
        this.busy.delete(nodeId)
        this.pending.delete(work)
      })
    this.pending.add(work)
  }

  /** Resolves once every judgement begun so far has finished (tests, and the gateway's close). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending])
  }

  private maxAgeMs(held: Held): number {
    return held.verdict.state === 'in_sync' ? this.options.reloadMs.inSync : this.options.reloadMs.notInSync
  }

  private async judge(nodeId: string, report: DriftReport, key: string, held: Held | undefined, now: Date) {
    const nowMs = now.getTime()
    // A held copy young enough that gives the same verdict: nothing to read or write.
    if (
      held &&
      nowMs - held.readAtMs < this.maxAgeMs(held) &&
      sameDrift(judgeDrift(held.baseline, report), held.verdict)
    ) {
      this.held.set(nodeId, { ...held, reportKey: key })
      return
    }
    this.options.onRead?.()
    const read = await readDriftBaseline(this.options.pool, nodeId)
    const baseline = read.fingerprint ? judgedBaseline(read.fingerprint) : null
    const verdict = judgeDrift(baseline, report, { syncing: read.syncing })
    let stored: Held['verdict'] = read.drift ?? { state: 'unknown', parts: [], reason: 'no_row' }
    if (!sameDrift(verdict, stored)) {
      const written = await recordDriftVerdict(this.options.pool, nodeId, verdict, now)
      if (written.written) {
        this.options.onWritten?.(verdict, written.event)
        if (written.event)
          this.options.logger('info', written.event, {
            node_id: nodeId,
            parts: verdict.parts,
            fingerprint_run_id: verdict.fingerprintRunId,
          })
      }
      stored = verdict
    }
    this.held.set(nodeId, { baseline, readAtMs: nowMs, verdict: stored, reportKey: key })
  }
}
