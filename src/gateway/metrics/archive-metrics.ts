// The WAL archiver's gauges (the embedded server's continuous archiving, or a DATABASE_URL server's
// own): on or off, when it last archived and last failed, and how many segments wait, read from
// pg_stat_archiver at scrape time. Absent values stay absent (never archived, no right to look).
import { Gauge, type Registry } from 'prom-client'

import type { Queryable } from '../../store/database.js'
import { readArchiverStatus } from '../../store/backup/wal-archive.js'
import { collectTogether } from './scrape-gauges.js'

export function registerArchiveGauges(
  registry: Registry,
  pool: Queryable,
  onError: (query: string, error: unknown) => void,
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
  const seconds = (iso: string) => Math.floor(new Date(iso).getTime() / 1000)
  collectTogether(
    [enabled, archived, failed, ready],
    async () => {
      const status = await readArchiverStatus(pool)
      for (const g of [archived, failed, ready]) g.reset()
      enabled.set(status.enabled ? 1 : 0)
      if (status.lastArchivedAt) archived.set(seconds(status.lastArchivedAt))
      if (status.lastFailedAt) failed.set(seconds(status.lastFailedAt))
      if (status.readySegments !== null && status.enabled) ready.set(status.readySegments)
    },
    (error) => onError('wal archiver', error),
  )
}
