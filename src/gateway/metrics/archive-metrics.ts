// The WAL archiver's gauges (the embedded server's continuous archiving, or a DATABASE_URL server's
// own): on or off, when it last archived and last failed, and how many segments wait, read from
// pg_stat_archiver at scrape time; and for the embedded server with an off-host archive, when a ship last
// succeeded and how many segments wait for one (archive-ship.json and the local wal/, no remote dialled).
// Absent values stay absent (never archived, no right to look, no remote).
import { Gauge, type Registry } from 'prom-client'

import type { Queryable } from '../../store/database.js'
import { readArchiverStatus } from '../../store/backup/wal-archive.js'
import { readShipping } from '../../store/embedded/archive-status.js'
import { collectTogether } from './scrape-gauges.js'

export function registerArchiveGauges(
  registry: Registry,
  pool: Queryable,
  onError: (query: string, error: unknown) => void,
  shipping: { stateDir?: string; now: () => Date } = { now: () => new Date() },
): void {
  const gauge = (name: string, help: string) => new Gauge({ name, help, registers: [registry] })
  const enabled = gauge(
    'fleetkit_wal_archive_enabled',
    '1 when the state database archives its WAL (archive_mode on), else 0.',
  )
  const archived = gauge(
    'fleetkit_wal_archive_last_archived_timestamp_seconds',
    'When the state database last archived a WAL segment (Unix time); absent before the first.',
  )
  const failed = gauge(
    'fleetkit_wal_archive_last_failed_timestamp_seconds',
    'When archiving a WAL segment last failed (Unix time); absent when it never failed.',
  )
  const ready = gauge(
    'fleetkit_wal_archive_ready_segments',
    'Finished WAL segments not archived yet; absent when the database role may not list pg_wal/archive_status.',
  )
  const shipped = gauge(
    'fleetkit_wal_archive_ship_last_success_timestamp_seconds',
    'When fleetkit db archive ship last succeeded (Unix time); absent with no off-host archive or before the first.',
  )
  const unshipped = gauge(
    'fleetkit_wal_archive_unshipped_segments',
    'Segments of the local WAL archive newer than the newest on the off-host archive; absent with no off-host archive.',
  )
  const seconds = (iso: string) => Math.floor(new Date(iso).getTime() / 1000)
  collectTogether(
    [enabled, archived, failed, ready, shipped, unshipped],
    async () => {
      const status = await readArchiverStatus(pool)
      const ship = shipping.stateDir ? await readShipping(shipping.stateDir, shipping.now()) : null
      for (const g of [archived, failed, ready, shipped, unshipped]) g.reset()
      if (ship?.lastSuccessAt) shipped.set(seconds(ship.lastSuccessAt))
      if (ship) unshipped.set(ship.unshippedSegments)
      enabled.set(status.enabled ? 1 : 0)
      if (status.lastArchivedAt) archived.set(seconds(status.lastArchivedAt))
      if (status.lastFailedAt) failed.set(seconds(status.lastFailedAt))
      if (status.readySegments !== null && status.enabled) ready.set(status.readySegments)
    },
    (error) => onError('wal archiver', error),
  )
}
