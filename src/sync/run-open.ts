// What a sync, dry run or drift starts from: its definition source (drift without --ref: the
// revision the last complete sync applied) and its ledger row, new or resumed (--resume), and the
// interruption that leaves a sync's run open for --resume.
import { FleetkitError, isFleetkitError } from '../checks/fleetkit-error.js'
import {
  createSyncRun,
  getSyncRun,
  lastAppliedRevision,
  resumeSyncRun,
  type SyncRunKind,
  type SyncRunRow,
} from '../store/sync/sync-ledger.js'
import { readDefinitionSource } from './definition-source.js'
import type { SyncPlan } from './plan.js'
import { normalise, resumable } from './resume-scope.js'
import type { SyncOptions } from './run-context.js'
import { endOrphan, staleError, who } from './run-ownership.js'

/**
 * An interrupted sync leaves its run open for --resume: the COMMAND_INTERRUPTED error names the
 * command that finishes it (`fleetkit sync --resume RUN`) instead of "run the same command again".
 */
export async function resumableOnInterrupt<T>(run: SyncRunRow, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (run.kind !== 'sync' || !isFleetkitError(error) || error.code !== 'COMMAND_INTERRUPTED') throw error
    throw new FleetkitError('COMMAND_INTERRUPTED', `${error.message}; run ${run.id} is left open to finish`, {
      actions: [`fleetkit sync --resume ${run.id}`],
      data: { ...error.data, runId: run.id },
      cause: error,
    })
  }
}

export async function openRun(options: SyncOptions, plan: SyncPlan): Promise<SyncRunRow> {
  const { pool } = options
  const startedBy = options.who ?? who()
  if (options.resume !== undefined) {
    const run = await getSyncRun(pool, options.resume)
    if (!run || !resumable(run)) {
      throw new FleetkitError(
        'SYNC_RUN_UNKNOWN',
        `there is no sync run ${options.resume} to finish${run ? ` (it is a ${run.kind} run, ${run.status}${run.outcome ? `: ${run.outcome}` : ''})` : ''}`,
        {
          actions: ['fleetkit events --type sync_run_started', 'fleetkit sync'],
          data: { runId: options.resume },
        },
      )
    }
    if (run.planHash !== plan.hash)
      throw staleError(
        run.planHash,
        plan.hash,
        `run ${run.id} was started with another plan (definition, roles, revision or nodes changed since)`,
      )
    endOrphan(run.ansiblePid)
    await resumeSyncRun(pool, run.id, process.pid, startedBy)
    return { ...run, attempts: run.attempts + 1 }
  }
  const kind: SyncRunKind = options.mode === 'apply' ? 'sync' : options.mode === 'drift' ? 'drift' : 'dry_run'
  return createSyncRun(pool, {
    kind,
    revision: plan.revision,
    definitionSha256: plan.definitionSha256,
    planHash: plan.hash,
    // The --limit is kept apart from the targets it selected, so --resume can reuse it (resume-scope.ts).
    plan: {
      ...plan,
      targets: plan.targets.map((t) => t.id),
      limit: options.limit === undefined ? null : normalise(options.limit),
    } as unknown as Record<string, unknown>,
    startedBy,
    pid: process.pid,
    nodes: [
      ...plan.targets.map((t) => ({
        nodeId: t.id,
        phase: t.id === plan.canary ? ('canary' as const) : ('fleet' as const),
        state: 'pending' as const,
      })),
      ...plan.skipped.map((s) => ({
        nodeId: s.id,
        phase: 'skipped' as const,
        state: 'skipped' as const,
        message: s.reason,
      })),
    ],
  })
}

/** drift without --ref compares the hosts with the revision the last complete sync applied (spec 04), when there is one. */
export async function readSource(options: SyncOptions): ReturnType<typeof readDefinitionSource> {
  const command = options.mode === 'drift' ? 'fleetkit drift' : 'fleetkit sync'
  const applied =
    options.mode === 'drift' && options.ref === undefined ? await lastAppliedRevision(options.pool) : undefined
  if (!applied) return readDefinitionSource(options.definitionPath, options.ref, command)
  options.report?.(
    `Drift against ${applied.revision}, the revision run ${applied.runId} applied (--ref compares with another).`,
  )
  return readDefinitionSource(options.definitionPath, applied.revision, command).catch((error: unknown) => {
    if (!(error instanceof FleetkitError) || error.code !== 'SYNC_REF_INVALID') throw error
    throw new FleetkitError(
      'SYNC_REF_INVALID',
      `the revision run ${applied.runId} applied (${applied.revision}) is not a commit of the repository that holds ${options.definitionPath}: give --ref`,
      {
        actions: ['fleetkit drift --ref $(git rev-parse HEAD)'],
        data: { ref: applied.revision },
      },
    )
  })
}
