// The stop of `fleetkit reconcile`: opened by the first run that fails (an event, and the state the
// gateway's /metrics serves as fleetkit_reconcile_stopped), refusing every later pass until a person
// clears it; and the coded error `--once` exits with.
import { FleetkitError } from '../../checks/fleetkit-error.js'
import { appendEvent } from '../../store/events.js'
import { clearReconcileStop, type ReconcileStop, recordReconcileStop } from '../../store/sync/reconcile-stops.js'
import type { StatePool } from '../../store/transaction.js'

export interface StopView {
  /** @pattern ^[A-Z][A-Z0-9_]+$ */
  code: string
  message: string
  runId: number | null
  nodes: string[]
  /** @format date-time */
  stoppedAt: string
}

export function stopView(s: ReconcileStop): StopView {
  return { code: s.code, message: s.message, runId: s.runId, nodes: s.nodes, stoppedAt: s.stoppedAt.toISOString() }
}

export async function openStop(
  pool: StatePool,
  report: (line: string) => void,
  stop: { runId: number | null; code: string; message: string; nodes: string[] },
): Promise<StopView> {
  const recorded = await recordReconcileStop(pool, stop)
  await appendEvent(pool, {
    kind: 'reconcile_stopped',
    data: { run_id: stop.runId, code: stop.code, nodes: stop.nodes, message: recorded.message },
  })
  report(
    `Stopped: ${recorded.message}. Nothing more is done until a person fixes it and runs fleetkit reconcile --clear.`,
  )
  return stopView(recorded)
}

export interface ReconcileClearResult {
  /** The stop it cleared; null when reconcile was not stopped (nothing changed). */
  cleared: StopView | null
  /** @minLength 1 */
  message: string
}

/** `fleetkit reconcile --clear`: a person fixed what stopped it; the next pass acts again. Changes no host. */
export async function clearReconcile(options: { pool: StatePool; actor: string }): Promise<ReconcileClearResult> {
  const cleared = await clearReconcileStop(options.pool, options.actor)
  if (!cleared) return { cleared: null, message: 'fleetkit reconcile is not stopped; nothing changed' }
  await appendEvent(options.pool, {
    kind: 'reconcile_cleared',
    data: { actor: options.actor, code: cleared.code, run_id: cleared.runId, stopped_at: cleared.stoppedAt },
  })
  return {
    cleared: stopView(cleared),
    message: `cleared the stop ${cleared.code}${cleared.runId === null ? '' : ` of run ${cleared.runId}`} (since ${cleared.stoppedAt.toISOString()}): reconcile acts again at its next pass`,
  }
}

/** The coded error `--once` exits with when its pass ended stopped or failed. */
export function stoppedError(pass: { outcome: string; stop: StopView | null }): FleetkitError {
  const stop = pass.stop!
  return new FleetkitError(
    'RECONCILE_STOPPED',
    `${pass.outcome === 'failed' ? 'a repair failed' : 'reconcile is stopped'}: ${stop.code}: ${stop.message}`,
    {
      actions: [
        ...(stop.runId === null ? [] : [`fleetkit sync --resume ${stop.runId}   (after fixing the node)`]),
        `fleetkit runbook ${stop.code}`,
        'fleetkit reconcile --clear',
      ],
      data: { pass },
    },
  )
}
