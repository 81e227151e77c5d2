// `fleetkit reconcile`'s gauge: whether a failed repair stopped it (a stop not cleared in the state),
// read at scrape time, so the alert sees it whichever process stopped and whether it still runs.
import { Gauge, type Registry } from 'prom-client'

import type { Queryable } from '../../store/database.js'
import { openReconcileStop } from '../../store/sync/reconcile-stops.js'
import { collectTogether } from './scrape-gauges.js'

export function registerReconcileGauges(
  registry: Registry,
  pool: Queryable,
  onError: (query: string, error: unknown) => void,
): void {
  const stopped = new Gauge({
    name: 'fleetkit_reconcile_stopped',
    help: '1 while fleetkit reconcile is stopped by a failed repair run and nobody cleared it (fleetkit reconcile --clear), else 0.',
    registers: [registry],
  })
  collectTogether(
    [stopped],
    async () => {
      const stop = await openReconcileStop(pool)
      stopped.set(stop ? 1 : 0)
    },
    (error) => onError('reconcile stop', error),
  )
}
