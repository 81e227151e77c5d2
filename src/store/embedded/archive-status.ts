// What `db status` (and the gateway's gauges' reader) says of continuous archiving: PostgreSQL's
// archiver and the archive directory's base backups.
import type { Queryable } from '../database.js'
import { readArchiverStatus, type ArchiverStatus } from '../backup/wal-archive.js'
import { archiveLayout, readArchiveConfig } from './archive-dir.js'
import { listBaseBackups } from './base-backup.js'
import { embeddedServerPaths } from './paths.js'

export interface ArchiveStatus extends ArchiverStatus {
  dir: string | null
  /** Whole seconds since the last segment was archived (null: none yet). */
  lastArchivedAgeSeconds: number | null
  baseBackups: { label: string; stoppedAt: string; bytes: number }[]
}

/** The archiver's state and the archive's base backups, for `db status`. */
export async function describeArchive(q: Queryable, stateDir: string, now: Date): Promise<ArchiveStatus> {
  const status = await readArchiverStatus(q)
  const config = await readArchiveConfig(embeddedServerPaths(stateDir))
  const backups = config ? await listBaseBackups(archiveLayout(config.dir)) : []
  return {
    ...status,
    dir: config?.dir ?? null,
    lastArchivedAgeSeconds:
      status.lastArchivedAt === null
        ? null
        : Math.max(0, Math.round((now.getTime() - new Date(status.lastArchivedAt).getTime()) / 1000)),
    baseBackups: backups.map((b) => ({ label: b.label, stoppedAt: b.stoppedAt, bytes: b.bytes })),
  }
}
