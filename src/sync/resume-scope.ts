// What `fleetkit sync --resume RUN` runs: the run's own --limit and --tags (stored with its plan),
// so an operator who does not repeat them resumes the same plan; different ones are refused.
import { FleetkitError } from '../checks/fleetkit-error.js'
import { getSyncRun, type SyncRunRow } from '../store/sync/sync-ledger.js'
import type { SyncOptions } from './run-context.js'

export interface RunScope {
  /** undefined: the run targeted every node. */
  limit: string[] | undefined
  tags: string[]
}

/**
 * The --limit and --tags a run was started with, read from its stored plan. A run recorded before
 * the plan carried `limit` had it as its targets and skipped nodes, which is what --limit selected.
 */
export function storedScope(plan: Record<string, unknown>): RunScope {
  const strings = (value: unknown): string[] | undefined =>
    Array.isArray(value) && value.every((v) => typeof v === 'string') ? (value as string[]) : undefined
  const tags = strings(plan.tags) ?? []
  if (Array.isArray(plan.limit) || plan.limit === null)
    return { limit: plan.limit === null ? undefined : normalise(strings(plan.limit) ?? []), tags }
  if (plan.limited !== true) return { limit: undefined, tags }
  const skipped = Array.isArray(plan.skipped) ? (plan.skipped as { id?: unknown }[]).map((s) => s.id) : []
  return { limit: normalise([...(strings(plan.targets) ?? []), ...(strings(skipped) ?? [])]), tags }
}

/** The --limit a plan records: sorted, once each, so `b,a` and `a,b` are the same. */
export function normalise(values: readonly string[]): string[] {
  return [...new Set(values)].sort()
}

function same(given: readonly string[] | undefined, stored: readonly string[] | undefined): boolean {
  if (given === undefined || stored === undefined) return given === stored
  return JSON.stringify(normalise(given)) === JSON.stringify(normalise(stored))
}

function spoken(flag: string, values: readonly string[] | undefined): string {
  return values === undefined || values.length === 0 ? `no ${flag}` : `${flag} ${normalise(values).join(',')}`
}

/**
 * A run --resume can finish: one left open (interrupted, or its process killed), or one that ended
 * with nodes not converged (a failed canary, failed or unreachable nodes), whose errors name
 * `fleetkit sync --resume RUN`. The resume runs only the nodes that did not converge.
 */
export function resumable(run: SyncRunRow): boolean {
  if (run.kind !== 'sync') return false
  return run.status === 'running' || RESUMABLE_OUTCOMES.has(run.outcome ?? '')
}
const RESUMABLE_OUTCOMES: ReadonlySet<string> = new Set(['canary_failed', 'partial', 'unreachable'])

/**
 * `options` with the resumed run's own --limit and --tags where the operator gave none.
 * SYNC_RESUME_SCOPE_CHANGED when they gave others; a run that cannot be resumed is left to the
 * SYNC_RUN_UNKNOWN refusal that follows.
 */
export async function withResumeScope(options: SyncOptions): Promise<SyncOptions> {
  if (options.resume === undefined) return options
  const run = await getSyncRun(options.pool, options.resume)
  if (!run || !resumable(run)) return options
  const stored = storedScope(run.plan)
  const limitChanged = options.limit !== undefined && !same(options.limit, stored.limit)
  const tagsChanged = options.tags !== undefined && !same(options.tags, stored.tags)
  if (limitChanged || tagsChanged) throw scopeChangedError(run, stored, options)
  return { ...options, limit: options.limit ?? stored.limit, tags: options.tags ?? stored.tags }
}

function scopeChangedError(run: SyncRunRow, stored: RunScope, options: SyncOptions): FleetkitError {
  const was = `${spoken('--limit', stored.limit)}, ${spoken('--tags', stored.tags)}`
  const now = `${spoken('--limit', options.limit ?? stored.limit)}, ${spoken('--tags', options.tags ?? stored.tags)}`
  return new FleetkitError(
    'SYNC_RESUME_SCOPE_CHANGED',
    `run ${run.id} was started with ${was}; this resume asks for ${now}; --resume finishes the run as it was started, so nothing was run`,
    {
      actions: [
        `fleetkit sync --resume ${run.id}   (its own --limit and --tags)`,
        'fleetkit sync --dry-run   (a new run)',
      ],
      data: {
        runId: run.id,
        started: { limit: stored.limit ?? null, tags: stored.tags },
        given: { limit: options.limit ?? null, tags: options.tags ?? null },
      },
    },
  )
}
