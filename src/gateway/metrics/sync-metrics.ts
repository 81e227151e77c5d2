// The sync ledger's gauges: when the latest `fleetkit sync` finished, whether it failed (its outcome
// as a label) and its nodes by state, read from the state at scrape time.
import { Gauge, type Registry } from 'prom-client'

import type { Queryable } from '../../store/database.js'
import { lastFinishedSync } from '../../store/sync/sync-ledger.js'
import { collectTogether } from './scrape-gauges.js'

export function registerSyncGauges(
  registry: Registry,
  pool: Queryable,
  onError: (query: string, error: unknown) => void,
): void {
  const finished = new Gauge({
    name: 'fleetkit_sync_last_run_timestamp_seconds',
    help: 'When the latest finished fleetkit sync run (not a dry run or drift check) finished (Unix time); absent before the first.',
    registers: [registry],
  })
  const failed = new Gauge({
    name: 'fleetkit_sync_last_run_failed',
    help: '1 when the latest finished fleetkit sync run did not converge every target (outcome canary_failed, partial or unreachable), 0 when it converged; the outcome is a label.',
    labelNames: ['outcome'],
    registers: [registry],
  })
  const nodes = new Gauge({
    name: 'fleetkit_sync_last_run_nodes',
    help: 'Nodes of the latest finished fleetkit sync run by their state in it (converged, changed, failed, unreachable, rolled_back, not_attempted, skipped).',
    labelNames: ['state'],
    registers: [registry],
  })
  collectTogether(
    [finished, failed, nodes],
    async () => {
      const run = await lastFinishedSync(pool)
      finished.reset()
      failed.reset()
      nodes.reset()
      if (!run) return
      finished.set(Math.floor(run.finishedAt.getTime() / 1000))
      failed.set({ outcome: run.outcome }, run.outcome === 'converged' ? 0 : 1)
      for (const [state, count] of Object.entries(run.nodes)) nodes.set({ state }, count)
    },
    (error) => onError('sync ledger', error),
  )
}
