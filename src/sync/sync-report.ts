// What a sync, dry run or drift run reports: the per-node lines, the outcome of a finished run and
// the coded error it maps to (src/sync/sync-run.ts runs it; the commands print it).
import { FleetkitError } from '../checks/fleetkit-error.js'
import type { NodeSyncState, SyncNodeRow, SyncOutcome, SyncRunKind } from '../store/sync/sync-ledger.js'
import type { FingerprintSummary } from './fingerprint.js'
import { MAX_DIFF_LINES, type TaskDifference } from './host-results.js'

export type SyncMode = 'apply' | 'dry-run' | 'drift'

export interface SyncNodeReport {
  /** @minLength 1 */
  node: string
  phase: 'canary' | 'fleet' | 'skipped'
  state: NodeSyncState
  /** @pattern ^[A-Z][A-Z0-9_]+$ */
  code: string | null
  runbook: string | null
  message: string | null
  tasks: {
    /**
     * @minimum 0
     * @asType integer
     */
    ok: number
    /**
     * @minimum 0
     * @asType integer
     */
    changed: number
    /**
     * @minimum 0
     * @asType integer
     */
    failed: number
  }
  changes: Record<string, string[]>
  /**
   * Per changed task, what differs: settings with their value now and the one wanted, file diff lines
   * (at most 200 a task), or hidden (no_log, a secret file). Check mode (--dry-run, drift) only; never
   * stored in the ledger, so a resumed or earlier run's node has none.
   */
  differences: TaskDifference[]
}

export interface SyncReport {
  /**
   * @minimum 1
   * @asType integer
   */
  runId: number
  kind: SyncRunKind
  outcome: SyncOutcome
  /** @pattern ^[0-9a-f]{40}$ */
  revision: string | null
  /** @pattern ^[0-9a-f]{64}$ */
  planHash: string
  plan: {
    playbook: string
    tags: string[]
    /** @pattern ^[0-9a-f]{64}$ */
    definitionSha256: string
    /** @pattern ^[0-9a-f]{64}$ */
    rolesSha256: string
    targets: string[]
    canary: string | null
  }
  canary: { declared: string | null; ran: string | null; skippedBecause: string | null; notes: string[] }
  speed: {
    mitogen: boolean
    /**
     * @minimum 1
     * @asType integer
     */
    forks: number
    description: string
  }
  nodes: SyncNodeReport[]
  /**
   * @propertyNames {"enum":["pending","running","converged","changed","failed","unreachable","rolled_back","not_attempted","skipped"]}
   */
  counts: Record<string, number>
  proofs: { kind: 'agentVersion' | 'image'; value: string; node: string; recorded: boolean }[]
  /** The no-change fast path: nodes skipped as unchanged, nodes that moved, fingerprints recorded. */
  fingerprint: FingerprintSummary
  /** Nodes this run enrolled: it handed each a single-use secret and the gateway CA, and its agent then heartbeat. */
  enrolled: string[]
  resumed: boolean
}

export const FINAL_OK: ReadonlySet<NodeSyncState> = new Set(['converged', 'changed'])

export function outcomeOf(mode: SyncMode, nodes: readonly SyncNodeRow[], canaryFailed: boolean): SyncOutcome {
  if (canaryFailed) return 'canary_failed'
  if (nodes.some((n) => n.state === 'failed' || n.state === 'rolled_back')) return 'partial'
  if (nodes.some((n) => n.state === 'unreachable')) return 'unreachable'
  if (mode === 'drift') return nodes.some((n) => n.state === 'changed') ? 'drifted' : 'no_drift'
  return 'converged'
}

export function nodeReport(n: SyncNodeRow, differences: readonly TaskDifference[] = []): SyncNodeReport {
  return {
    node: n.nodeId,
    phase: n.phase,
    state: n.state,
    code: n.code,
    runbook: n.code ? `fleetkit runbook ${n.code}` : null,
    message: n.message,
    tasks: { ok: n.tasksOk, changed: n.tasksChanged, failed: n.tasksFailed },
    changes: n.changes,
    differences: [...differences],
  }
}

/**
 * The lines printed under a changed task: each setting as `- NAME now` / `+ NAME wanted`, then the
 * file diff, then a marker when it was cut; a hidden task says only that it changed.
 */
export function differenceLines(d: TaskDifference): string[] {
  if (d.hidden) return ['changed, diff hidden']
  const lines: string[] = []
  for (const s of d.settings) {
    lines.push(`- ${s.setting} ${s.current ?? '(unset)'}`)
    lines.push(`+ ${s.setting} ${s.wanted ?? '(unset)'}`)
  }
  lines.push(...d.lines)
  if (d.truncated) lines.push(`... truncated: more than ${MAX_DIFF_LINES} lines differ`)
  return lines
}

/** Under a node's line, each changed task with a difference (`  role: task`) and its lines, indented. */
export function formatDifferences(n: Pick<SyncNodeReport, 'differences'>): string[] {
  return n.differences.flatMap((d) => [`  ${d.role}: ${d.task}`, ...differenceLines(d).map((l) => `      ${l}`)])
}

export function formatNodeLine(n: SyncNodeReport, check: boolean): string {
  const state = check && n.state === 'changed' ? 'would change' : n.state.replace('_', ' ')
  const roles = Object.entries(n.changes)
    .map(([role, tasks]) => `${role} (${tasks.length})`)
    .join(', ')
  const detail = n.code ? ` ${n.code}: ${n.message ?? ''}` : n.message ? ` ${n.message}` : ''
  const tasks =
    n.state === 'not_attempted' || n.state === 'skipped'
      ? ''
      : ` [${n.tasks.ok + n.tasks.failed} tasks, ${n.tasks.changed} changed${roles ? `: ${roles}` : ''}]`
  return `${n.node}${n.phase === 'canary' ? ' (canary)' : ''}: ${state}${tasks}${detail}`
}

/**
 * What to run after nodes failed: `--resume` finishes the run, but cannot help a node that failed for
 * having no pinned host key (SSH_HOST_KEY_NOT_PINNED: usually declared before its host was seeded and
 * booted), which needs its seed first; when those are all that failed, `--limit` syncs the rest alone.
 */
function failureSteps(report: SyncReport): string[] {
  const failed = report.nodes.filter((n) => ['failed', 'rolled_back', 'unreachable', 'not_attempted'].includes(n.state))
  const unpinned = failed.filter((n) => n.code === 'SSH_HOST_KEY_NOT_PINNED').map((n) => n.node)
  if (unpinned.length === 0) return [rerun(report)]
  const others = report.nodes.filter((n) => FINAL_OK.has(n.state)).map((n) => n.node)
  return [
    ...unpinned.map(
      (node) => `fleetkit seed ${node} --kind worker   (boot ${node} from it: the seed pins its host key)`,
    ),
    ...(failed.length > unpinned.length
      ? [rerun(report)]
      : others.length > 0
        ? [`fleetkit sync --limit ${others.join(',')}   (the nodes whose hosts exist)`]
        : []),
    'fleetkit runbook SSH_HOST_KEY_NOT_PINNED',
  ]
}

/**
 * How to finish what a run left: a sync run is resumed (`--resume` runs what did not converge); a drift run
 * changes nothing and cannot be resumed (`sync --resume` refuses it, SYNC_RUN_UNKNOWN): it is run again.
 */
function rerun(report: SyncReport): string {
  return report.kind === 'drift'
    ? 'fleetkit drift   (again, once the nodes it could not read are fixed)'
    : `fleetkit sync --resume ${report.runId}`
}

/** The error a finished run's outcome maps to; null when it exits 0. */
export function outcomeError(report: SyncReport): FleetkitError | null {
  const list = (states: NodeSyncState[]) => report.nodes.filter((n) => states.includes(n.state)).map((n) => n.node)
  const data = { report }
  const resume = rerun(report)
  switch (report.outcome) {
    case 'converged':
    case 'no_drift':
      return null
    case 'canary_failed':
      return new FleetkitError(
        'SYNC_CANARY_FAILED',
        `run ${report.runId}: the canary ${report.canary.ran ?? report.canary.declared ?? ''} did not converge (${report.nodes.find((n) => n.phase === 'canary' && !FINAL_OK.has(n.state))?.code ?? 'unreachable'}); ${list(['not_attempted']).length} other node(s) not attempted`,
        {
          actions: [
            `fleetkit runbook ${report.nodes.find((n) => n.phase === 'canary' && n.code)?.code ?? 'SYNC_CANARY_FAILED'}`,
            resume,
          ],
          data,
        },
      )
    case 'partial':
      return new FleetkitError(
        'SYNC_PARTIAL_FAILURE',
        `run ${report.runId}: ${list(['failed', 'rolled_back']).join(', ')} did not converge; ${list(['converged', 'changed']).length} node(s) did`,
        { actions: failureSteps(report), data },
      )
    case 'unreachable':
      return new FleetkitError(
        'SYNC_NODES_UNREACHABLE',
        `run ${report.runId}: ${list(['unreachable']).join(', ')} could not be reached over SSH; ${
          list(['converged', 'changed']).length > 0 ? 'every other node converged' : 'no other node was synced'
        }`,
        { actions: [resume], data },
      )
    case 'drifted':
      return new FleetkitError(
        'DRIFT_DETECTED',
        `${list(['changed']).length} node(s) differ from the definition: ${report.nodes
          .filter((n) => n.state === 'changed')
          .map((n) => `${n.node} (${Object.keys(n.changes).join(', ')})`)
          .join('; ')}`,
        {
          actions: ['fleetkit sync --dry-run', 'fleetkit sync'],
          data,
        },
      )
  }
}
