// `fleetkit reconcile`: passes (reconcile-pass.ts) every interval until stopped, or one with --once,
// holding the fleet's reconcile lock for its whole life (a second reconcile is refused at once).
import { FleetkitError, isFleetkitError } from '../../checks/fleetkit-error.js'
import { withSessionLock } from '../../store/advisory-lock.js'
import { RECONCILE_LOCK_KEY } from '../../store/sync/reconcile-stops.js'
import { type PassOptions, type ReconcilePass, reconcilePass } from './reconcile-pass.js'
import type { ReconcileClearResult } from './reconcile-stop.js'

export interface ReconcileOptions extends PassOptions {
  /** One pass, then return (tests, cron). */
  once: boolean
  /** Between the end of a pass and the start of the next. */
  intervalMs: number
  /** Ends the loop between passes (SIGTERM from systemd, Ctrl-C); a run in flight is interrupted by runSync itself. */
  signal: AbortSignal
  /** Resolves after `ms` or as soon as `signal` aborts (src/config/abortable-sleep.ts). */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>
  /** Called after each pass (the command prints a summary line). */
  onPass?: (pass: ReconcilePass) => void
}

export interface ReconcileResult {
  /**
   * Passes run by this process.
   * @minimum 1
   * @asType integer
   */
  passes: number
  /** The last pass. */
  last: ReconcilePass
}

/** What `fleetkit reconcile --json` prints: its passes, or with --clear the stop it cleared. */
export type ReconcileOutput = ReconcileResult | ReconcileClearResult

/** The summary line after each pass. */
export function passLine(pass: ReconcilePass): string {
  const runs = pass.runs.map((r) => `run ${r.runId} ${r.outcome}`).join(', ')
  return `Pass ${pass.at}: ${pass.outcome}; ${pass.repair.length} to repair, ${pass.skipped.length} left alone${
    runs ? `; ${runs}` : ''
  }${pass.deferred.length > 0 ? `; waiting: ${pass.deferred.join(', ')}` : ''}; budget ${pass.budget.used}/${pass.budget.max} run(s) this hour.`
}

export async function runReconcile(options: ReconcileOptions): Promise<ReconcileResult> {
  const locked = await withSessionLock(options.pool, RECONCILE_LOCK_KEY, () => loop(options))
  if (!locked.locked)
    throw new FleetkitError(
      'RECONCILE_IN_PROGRESS',
      'another fleetkit reconcile runs against this state (it holds the reconcile lock): one at a time',
      {
        actions: ['systemctl status fleetkit-reconcile', 'fleetkit events --type reconcile_stopped'],
        data: {},
      },
    )
  return locked.value
}

async function loop(o: ReconcileOptions): Promise<ReconcileResult> {
  let passes = 0
  let last: ReconcilePass | undefined
  for (;;) {
    try {
      last = await reconcilePass(o)
      passes += 1
      o.onPass?.(last)
    } catch (error) {
      // A pass that could not start (a definition that does not load, a drift check refused) acted on
      // nothing: the service says so and tries again next pass; --once reports it as it is.
      if (o.once || !isFleetkitError(error) || error.code === 'COMMAND_INTERRUPTED') throw error
      o.report(
        `The pass did not run: ${error.code}: ${error.message}; next pass in ${Math.round(o.intervalMs / 1000)} s.`,
      )
    }
    if (o.once && last) return { passes, last }
    if (o.signal.aborted) break
    await o.sleep(o.intervalMs, o.signal)
    if (o.signal.aborted) break
  }
  if (!last)
    throw new FleetkitError('COMMAND_INTERRUPTED', 'fleetkit reconcile was stopped before its first pass', {
      actions: ['fleetkit reconcile --once'],
      data: {},
    })
  return { passes, last }
}
