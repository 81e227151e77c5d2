// One pass of `fleetkit reconcile`: refuse while a failed run's stop is open; check drift on the nodes it
// may touch; select drifted and behind nodes (reconcile-selection.ts); sync them, the canary alone first,
// then at most N per run, within the hourly budget; on the first run that does not converge, open the stop.
import type { Clock } from '../../config/clock.js'
import { isFleetkitError } from '../../checks/fleetkit-error.js'
import type { Definition } from '../../definition/types.js'
import { openReconcileStop, syncRunsStartedSince } from '../../store/sync/reconcile-stops.js'
import type { StatePool } from '../../store/transaction.js'
import { budgetWindowStart, type RunBudget, repairBatches, runBudget } from './reconcile-budget.js'
import { type ReconcileCandidate, type ReconcileSkip, selectReconcileNodes } from './reconcile-selection.js'
import { openStop, type StopView, stopView } from './reconcile-stop.js'

/** Who the ledger, the events and the budget name as the actor of reconcile's runs. */
export const RECONCILE_ACTOR = 'reconcile'

/** What reconcile needs of a finished sync or drift run (src/sync's SyncReport has it). */
export interface ReconcileRunReport {
  runId: number
  outcome: string
  nodes: readonly { node: string; state: string; code: string | null; message: string | null }[]
}

/**
 * How reconcile runs Ansible: through `fleetkit sync`'s own library path (runSync), passed in by the
 * command because sync and lifecycle are peers. Both record their run in the ledger with actor `reconcile`.
 */
interface ReconcileRunner {
  /** A drift check (check mode, changes nothing) of these nodes. */
  checkDrift(nodeIds: readonly string[]): Promise<ReconcileRunReport>
  /** One applying sync run of these nodes (its canary first, as every sync). */
  sync(nodeIds: readonly string[]): Promise<ReconcileRunReport>
}

export interface PassOptions {
  pool: StatePool
  clock: Clock
  /** The definition as it is now, and its text (what "converged for the current definition" compares with). */
  loadDefinition: () => Promise<{ definition: Definition; text: string }>
  runner: ReconcileRunner
  /** At most this many nodes per sync run after the canary. */
  parallel: number
  /** At most this many sync runs in any hour, counted from the ledger. */
  maxRunsPerHour: number
  /** Run a drift check first (until agents report drift themselves, this is how a hand edit is found). */
  driftCheck: boolean
  /** Progress lines. */
  report: (line: string) => void
}

type PassOutcome = 'nothing_to_do' | 'repaired' | 'budget_spent' | 'stopped' | 'failed' | 'sync_busy'

export interface ReconcilePass {
  /** @format date-time */
  at: string
  /**
   * nothing_to_do; repaired (every run converged); budget_spent (some nodes wait for the next hour's budget);
   * stopped (a failed run's stop is open: nothing was done); failed (a run failed: the stop is open now);
   * sync_busy (a person's fleetkit sync holds the sync lock: tried again next pass).
   */
  outcome: PassOutcome
  /** The open stop: the one that refused this pass, or the one this pass opened; null when none. */
  stop: StopView | null
  /** The drift check this pass ran; null when it ran none. */
  driftCheck: { runId: number; outcome: string } | null
  repair: ReconcileCandidate[]
  skipped: ReconcileSkip[]
  /** The sync runs this pass started, in order (the canary's first). */
  runs: { runId: number; nodes: string[]; outcome: string }[]
  /** Nodes to repair that this pass did not reach (budget spent, a failure, the sync lock). */
  deferred: string[]
  budget: {
    used: number
    left: number
    max: number
    /** @format date-time */
    nextSlotAt: string | null
  }
}

function budgetView(b: RunBudget): ReconcilePass['budget'] {
  return { used: b.used, left: b.left, max: b.max, nextSlotAt: b.nextSlotAt?.toISOString() ?? null }
}

const OUTCOME_CODE: Record<string, string> = {
  canary_failed: 'SYNC_CANARY_FAILED',
  partial: 'SYNC_PARTIAL_FAILURE',
  unreachable: 'SYNC_NODES_UNREACHABLE',
}

async function currentBudget(o: PassOptions): Promise<RunBudget> {
  const now = o.clock.now()
  const startedAt = await syncRunsStartedSince(o.pool, RECONCILE_ACTOR, budgetWindowStart(now))
  return runBudget({ startedAt, now, maxPerHour: o.maxRunsPerHour })
}

export async function reconcilePass(o: PassOptions): Promise<ReconcilePass> {
  const at = o.clock.now().toISOString()
  const open = await openReconcileStop(o.pool)
  if (open) {
    o.report(
      `Stopped since ${open.stoppedAt.toISOString()} by ${open.code}${open.runId === null ? '' : ` (run ${open.runId})`}: nothing is done until a person clears it (fleetkit reconcile --clear).`,
    )
    return {
      at,
      outcome: 'stopped',
      stop: stopView(open),
      driftCheck: null,
      repair: [],
      skipped: [],
      runs: [],
      deferred: [],
      budget: budgetView(await currentBudget(o)),
    }
  }
  const { definition, text } = await o.loadDefinition()
  const select = () => selectReconcileNodes({ pool: o.pool, definition, definitionText: text })
  let selection = await select()
  let driftCheck: ReconcilePass['driftCheck'] = null
  if (o.driftCheck && selection.eligible.length > 0) {
    o.report(`Drift check of ${selection.eligible.length} node(s): ${selection.eligible.join(', ')}.`)
    const drift = await o.runner.checkDrift(selection.eligible)
    driftCheck = { runId: drift.runId, outcome: drift.outcome }
    o.report(`Drift check run ${drift.runId}: ${drift.outcome}.`)
    selection = await select()
  }
  for (const s of selection.skipped) o.report(`Leaves ${s.nodeId} alone: ${s.reason}.`)
  const result = (outcome: PassOutcome, extra: Partial<ReconcilePass>, budget: RunBudget): ReconcilePass => ({
    at,
    outcome,
    stop: null,
    driftCheck,
    repair: selection.repair,
    skipped: selection.skipped,
    runs: [],
    deferred: [],
    ...extra,
    budget: budgetView(budget),
  })
  let budget = await currentBudget(o)
  if (selection.repair.length === 0) {
    o.report('Nothing to repair: every node it may touch is converged for this definition and not drifted.')
    return result('nothing_to_do', {}, budget)
  }
  for (const c of selection.repair) o.report(`To repair: ${c.nodeId} (${c.why}: ${c.detail}).`)

  const batches = repairBatches(
    selection.repair.map((c) => c.nodeId),
    definition.canary ?? null,
    o.parallel,
  )
  const runs: ReconcilePass['runs'] = []
  const deferredFrom = (i: number) => batches.slice(i).flat()
  for (const [i, batch] of batches.entries()) {
    budget = await currentBudget(o)
    if (budget.left === 0) {
      o.report(
        `Budget spent: ${budget.used} of ${budget.max} sync run(s) in the last hour; ${deferredFrom(i).join(', ')} wait${budget.nextSlotAt ? ` until ${budget.nextSlotAt.toISOString()}` : ''}.`,
      )
      return result('budget_spent', { runs, deferred: deferredFrom(i) }, budget)
    }
    o.report(`${i === 0 ? 'Canary' : 'Sync'} ${batch.join(', ')}.`)
    let run: ReconcileRunReport
    try {
      run = await o.runner.sync(batch)
    } catch (error) {
      if (!isFleetkitError(error) || error.code === 'COMMAND_INTERRUPTED') throw error
      if (error.code === 'SYNC_IN_PROGRESS') {
        o.report(`Another fleetkit sync holds the sync lock: ${batch.join(', ')} and the rest wait for the next pass.`)
        return result('sync_busy', { runs, deferred: deferredFrom(i) }, await currentBudget(o))
      }
      const runId = typeof error.data?.runId === 'number' ? error.data.runId : null
      const stop = await openStop(o.pool, o.report, { runId, code: error.code, message: error.message, nodes: batch })
      return result('failed', { runs, deferred: deferredFrom(i + 1), stop }, await currentBudget(o))
    }
    runs.push({ runId: run.runId, nodes: [...batch], outcome: run.outcome })
    o.report(`Run ${run.runId}: ${run.outcome}.`)
    if (run.outcome !== 'converged') {
      const bad = run.nodes.filter((n) => n.state !== 'converged' && n.state !== 'changed' && n.state !== 'skipped')
      const first = bad.find((n) => n.code !== null) ?? bad[0]
      const stop = await openStop(o.pool, o.report, {
        runId: run.runId,
        code: OUTCOME_CODE[run.outcome] ?? 'SYNC_PARTIAL_FAILURE',
        message: `run ${run.runId} ended ${run.outcome}: ${bad.map((n) => `${n.node} ${n.state}${n.code ? ` (${n.code})` : ''}`).join(', ') || 'no node converged'}${first?.message ? `; ${first.message}` : ''}`,
        nodes: bad.map((n) => n.node),
      })
      return result('failed', { runs, deferred: deferredFrom(i + 1), stop }, await currentBudget(o))
    }
  }
  return result('repaired', { runs }, await currentBudget(o))
}
