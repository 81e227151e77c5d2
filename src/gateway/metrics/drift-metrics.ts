// The drift gauge: nodes whose agent reports a converged-state digest other than the one their last
// sync recorded, by pool, read from the state at scrape time (FleetkitNodeDrifted alerts on it).
import { Gauge, type Registry } from 'prom-client'

import type { Queryable } from '../../store/database.js'
import { countDriftedByPool } from '../../store/nodes/node-drift.js'
import { collectTogether } from './scrape-gauges.js'

export function registerDriftGauges(
  registry: Registry,
  pool: Queryable,
  onError: (query: string, error: unknown) => void,
): void {
  const drifted = new Gauge({
    name: 'fleetkit_nodes_drifted',
    help: 'Nodes whose agent reports a converged-state digest other than the one their last sync recorded, by pool (0 for a pool with none).',
    labelNames: ['pool'],
    registers: [registry],
  })
  collectTogether(
    [drifted],
    async () => {
      const counts = await countDriftedByPool(pool)
      drifted.reset()
      for (const c of counts) drifted.set({ pool: c.pool }, c.count)
    },
    (error) => onError('node drift', error),
  )
}
