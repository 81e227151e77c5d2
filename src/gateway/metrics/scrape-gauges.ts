// Gauges read at scrape time: one read fills several gauges, and a read that fails is logged and keeps the
// last values, so a store failure never fails /metrics (prom-client rejects the whole scrape when a collect throws).
import type { Gauge } from 'prom-client'

/**
 * Make `read` the collect function of every gauge given. The registry collects its metrics concurrently,
 * so all of them await the same read; a failed read goes to `onError` and the gauges keep what they had.
 */
export function collectTogether(gauges: Gauge[], read: () => Promise<void>, onError: (error: unknown) => void): void {
  let pending: Promise<void> | undefined
  const refresh = () => {
    pending ??= read()
      .catch(onError)
      .finally(() => {
        pending = undefined
      })
    return pending
  }
  for (const gauge of gauges) (gauge as unknown as { collect: () => Promise<void> }).collect = refresh
}
