// Who runs a sync and who holds it: the actor recorded as started_by, the SYNC_IN_PROGRESS refusal
// naming the lock holder, ending a killed sync's orphaned ansible-playbook before a resume, and the
// SYNC_PLAN_STALE refusal of a plan that changed since it was reviewed.
import { readFileSync } from 'node:fs'
import { hostname, userInfo } from 'node:os'

import type { StatePool } from '../store/transaction.js'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { listUnfinishedSyncRuns } from '../store/sync/sync-ledger.js'

export function who(): string {
  try {
    return `${userInfo().username}@${hostname()}`
  } catch {
    return `uid ${process.getuid?.() ?? '?'}@${hostname()}`
  }
}

/** An orphaned ansible-playbook of a killed sync still converging hosts must end before a resume starts. */
export function endOrphan(pid: number | null): boolean {
  if (pid === null) return false
  let cmdline: string
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
  } catch {
    return false
  }
  if (!cmdline.includes('ansible-playbook')) return false
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // Already gone.
  }
  return true
}

export async function inProgressError(pool: StatePool): Promise<FleetkitError> {
  const holder = (await listUnfinishedSyncRuns(pool))[0]
  const by = holder
    ? `run ${holder.id}, started by ${holder.startedBy} (pid ${holder.pid}) at ${holder.startedAt.toISOString()}`
    : 'a sync whose run is not recorded yet'
  return new FleetkitError('SYNC_IN_PROGRESS', `another fleetkit sync holds the fleet's sync lock: ${by}`, {
    actions: ['wait for it to finish (fleetkit events --type sync_run_finished)', 'run fleetkit sync again afterwards'],
    data: holder
      ? { runId: holder.id, startedBy: holder.startedBy, pid: holder.pid, startedAt: holder.startedAt.toISOString() }
      : {},
  })
}

export function staleError(reviewed: string, current: string, why: string): FleetkitError {
  return new FleetkitError(
    'SYNC_PLAN_STALE',
    `${why}: the plan reviewed was ${reviewed.slice(0, 16)}…, the plan now is ${current.slice(0, 16)}…; nothing was run`,
    {
      actions: ['fleetkit sync --dry-run (review the new plan)', `fleetkit sync --plan-hash ${current}`],
      data: { reviewed, current },
    },
  )
}
