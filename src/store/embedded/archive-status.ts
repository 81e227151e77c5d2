// What `db status` (and the gateway's gauges' reader) says of continuous archiving: PostgreSQL's
// archiver, the archive directory's base backups, and the shipping to the off-host archive.
import { readdir } from 'node:fs/promises'

import type { Queryable } from '../database.js'
import { readArchiverStatus, type ArchiverStatus } from '../backup/wal-archive.js'
import { archiveLayout, readArchiveConfig } from './archive-dir.js'
import { readArchiveRemote, readShipStatus, type ShipStatus } from './archive-remote.js'
import { listBaseBackups } from './base-backup.js'
import { embeddedServerPaths } from './paths.js'
import { segmentOf } from './wal-chain.js'

interface ArchiveShipping extends Omit<ShipStatus, 'lastAttemptAt'> {
  url: string
  /** @format date-time */
  lastAttemptAt: string | null
  /** Whole seconds since the last ship that succeeded (null: none yet). */
  lastSuccessAgeSeconds: number | null
  /**
   * Segments in the local archive newer than the last shipped one: what the loss of this machine costs now.
   * @minimum 0
   * @asType integer
   */
  unshippedSegments: number
}

export interface ArchiveStatus extends ArchiverStatus {
  dir: string | null
  /** Whole seconds since the last segment was archived (null: none yet). */
  lastArchivedAgeSeconds: number | null
  baseBackups: { label: string; stoppedAt: string; bytes: number }[]
  /** The off-host archive (fleetkit db archive remote add) and its shipping; null when there is none. */
  shipping: ArchiveShipping | null
}

const ageSeconds = (at: string | null, now: Date) =>
  at === null ? null : Math.max(0, Math.round((now.getTime() - new Date(at).getTime()) / 1000))

/** The archiver's state and the archive's base backups, for `db status`. */
export async function describeArchive(q: Queryable, stateDir: string, now: Date): Promise<ArchiveStatus> {
  const status = await readArchiverStatus(q)
  const paths = embeddedServerPaths(stateDir)
  const config = await readArchiveConfig(paths)
  const backups = config ? await listBaseBackups(archiveLayout(config.dir)) : []
  return {
    ...status,
    dir: config?.dir ?? null,
    lastArchivedAgeSeconds: ageSeconds(status.lastArchivedAt, now),
    baseBackups: backups.map((b) => ({ label: b.label, stoppedAt: b.stoppedAt, bytes: b.bytes })),
    shipping: config ? await describeShipping(stateDir, config.dir, now) : null,
  }
}

/** The shipping of the state directory's archive (null: no archive or no off-host archive), for the gateway's gauges. */
export async function readShipping(stateDir: string, now: Date): Promise<ArchiveShipping | null> {
  const config = await readArchiveConfig(embeddedServerPaths(stateDir))
  return config ? describeShipping(stateDir, config.dir, now) : null
}

/** From archive-remote.json and archive-ship.json and a listing of the local wal/: no remote is dialled. */
async function describeShipping(stateDir: string, dir: string, now: Date): Promise<ArchiveShipping | null> {
  const paths = embeddedServerPaths(stateDir)
  const remote = await readArchiveRemote(paths)
  if (!remote) return null
  const shipped = await readShipStatus(paths)
  const last = shipped?.lastShippedWal ?? null
  const local = await readdir(archiveLayout(dir).walDir).catch(() => [] as string[])
  return {
    url: remote.url,
    lastShippedWal: last,
    lastSuccessAt: shipped?.lastSuccessAt ?? null,
    lastAttemptAt: shipped?.lastAttemptAt ?? null,
    lastError: shipped?.lastError ?? null,
    lastSuccessAgeSeconds: ageSeconds(shipped?.lastSuccessAt ?? null, now),
    unshippedSegments: local.filter((n) => segmentOf(n) !== undefined && (last === null || n > last)).length,
  }
}
