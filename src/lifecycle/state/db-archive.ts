// Continuous archiving of the embedded server (`fleetkit db archive enable|disable|base-backup`) and
// what `db status` says of it. Turning it on is proved before it is recorded: the server restarts
// with the settings, a WAL segment is switched out and must arrive in the directory; if it does not,
// the settings are put back and the server restarted as it was. Then the first base backup is taken.
import { stat } from 'node:fs/promises'

import type { StatePool } from '../../store/transaction.js'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Env } from '../../config/state-dir.js'
import {
  requireEmbedded,
  archiveCommand,
  withArchiveAdminLock,
  archiveLayout,
  checkArchiveDir,
  prepareArchiveDir,
  readArchiveConfig,
  removeArchiveConfig,
  writeArchiveConfig,
} from '../../store/embedded/archive-dir.js'
import { type ArchivePruneResult, pruneArchive } from '../../store/embedded/archive-prune.js'
import { baseBackupLabel, type BaseBackupManifest, takeBaseBackup } from '../../store/embedded/base-backup.js'
import { embeddedServerPaths } from '../../store/embedded/paths.js'
import { logReason, logSize } from '../../store/embedded/process.js'
import { ensureEmbeddedServer, stopEmbeddedServer } from '../../store/embedded/server.js'
import { appendEvent } from '../../store/events.js'
import { postgresRunAs } from '../../store/postgres-binaries.js'
import {
  checkpoint,
  readArchiverStatus,
  resetArchiveSettings,
  setArchiveSettings,
  switchWal,
  withBackupSession,
} from '../../store/backup/wal-archive.js'

export interface ArchiveOptions {
  /** The embedded server's pool (the command opens it): it follows the server across the restarts. */
  pool: StatePool
  stateDir: string
  env: Env
  now: () => Date
  progress: (message: string) => void
  /** How long a switched segment may take to reach the directory (default 30 s). */
  archiveWaitMs?: number
  sleep?: (ms: number) => Promise<void>
}

export interface ArchiveEnableResult {
  dir: string
  /** The segment switched out to prove the command works. */
  provedWith: string
  /**
   * @minimum 1
   * @asType integer
   */
  archiveTimeoutSeconds: number
  baseBackup: BaseBackupManifest
  /** False when archiving was on into this directory already (only a base backup was taken). */
  changed: boolean
}

async function restart(options: ArchiveOptions): Promise<void> {
  options.progress('Restarting the embedded PostgreSQL server (gateways answer 503 for a moment)')
  await stopEmbeddedServer(options.stateDir)
  await ensureEmbeddedServer(options.stateDir)
}

/** Enable, disable, base-backup and restore --to run one at a time (each restarts or reads the server's archiving). */
function oneAtATime<T>(options: ArchiveOptions, fn: () => Promise<T>): Promise<T> {
  requireEmbedded(options.env)
  return withArchiveAdminLock(embeddedServerPaths(options.stateDir), options.progress, fn)
}

export function enableArchiving(
  options: ArchiveOptions & { dir: string; archiveTimeoutSeconds: number },
): Promise<ArchiveEnableResult> {
  return oneAtATime(options, () => enableLocked(options))
}

async function enableLocked(
  options: ArchiveOptions & { dir: string; archiveTimeoutSeconds: number },
): Promise<ArchiveEnableResult> {
  const dir = checkArchiveDir(options.dir)
  const paths = embeddedServerPaths(options.stateDir)
  const { pool } = options
  const before = await readArchiverStatus(pool)
  const recorded = await readArchiveConfig(paths)
  const command = archiveCommand(dir)
  const already =
    recorded?.dir === dir &&
    before.enabled &&
    before.archiveCommand === command &&
    before.archiveTimeoutSeconds === options.archiveTimeoutSeconds
  await prepareArchiveDir(dir, await postgresRunAs({ root: paths.root }))
  let provedWith = before.lastArchivedWal ?? ''
  if (!already) {
    await setArchiveSettings(pool, {
      archiveCommand: command,
      archiveTimeoutSeconds: options.archiveTimeoutSeconds,
    })
    await restart(options)
    try {
      provedWith = await proveArchiving(pool, options)
    } catch (error) {
      // As it was: the settings reset (or those of the directory before), the server restarted.
      if (recorded && before.enabled)
        await setArchiveSettings(pool, {
          archiveCommand: before.archiveCommand,
          archiveTimeoutSeconds: before.archiveTimeoutSeconds,
        })
      else await resetArchiveSettings(pool)
      await restart(options)
      throw error
    }
    await writeArchiveConfig(paths, { dir, enabledAt: options.now().toISOString() })
    await appendEvent(pool, {
      kind: 'wal_archiving_enabled',
      data: { dir, archive_timeout_seconds: options.archiveTimeoutSeconds, proved_with: provedWith },
    })
  }
  const baseBackup = await baseBackupOn(pool, options, dir)
  return { dir, provedWith, archiveTimeoutSeconds: options.archiveTimeoutSeconds, baseBackup, changed: !already }
}

/** A segment switched out now must be archived (or its failure seen) within the wait. */
async function proveArchiving(pool: StatePool, options: ArchiveOptions): Promise<string> {
  const sleep = options.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)))
  await checkpoint(pool)
  const paths = embeddedServerPaths(options.stateDir)
  // What the archiver writes from here on: an older FATAL in the log is not this failure.
  const logFrom = logSize(paths.logFile)
  const failedBefore = (await readArchiverStatus(pool)).failedCount
  const wal = await switchWal(pool)
  const deadline = options.now().getTime() + (options.archiveWaitMs ?? 30_000)
  for (;;) {
    const status = await readArchiverStatus(pool)
    if (status.lastArchivedWal !== null && status.lastArchivedWal >= wal) return wal
    const failed = status.failedCount > failedBefore
    if (failed || options.now().getTime() >= deadline) {
      throw new FleetkitError(
        'ARCHIVE_NOT_WORKING',
        `PostgreSQL could not archive WAL segment ${wal}${failed ? '' : ' in time'}: ${logReason(paths.logFile, logFrom)}`,
        {
          actions: [
            'check that the postgres user can write the directory (and pass through every parent)',
            `read ${paths.logFile}`,
          ],
          data: { wal, logFile: paths.logFile },
        },
      )
    }
    await sleep(250)
  }
}

/** A base backup on a session of its own, its event written on that session. */
function baseBackupOn(pool: StatePool, options: ArchiveOptions, dir: string): Promise<BaseBackupManifest> {
  return withBackupSession(pool, async (session) => {
    const manifest = await takeBaseBackup({
      client: session,
      dataDir: embeddedServerPaths(options.stateDir).dataDir,
      layout: archiveLayout(dir),
      label: baseBackupLabel(options.now()),
      progress: options.progress,
    })
    await appendEvent(session, {
      kind: 'base_backup_taken',
      data: { label: manifest.label, dir, bytes: manifest.bytes, stopped_at: manifest.stoppedAt },
    })
    return manifest
  })
}

export function takeArchiveBaseBackup(options: ArchiveOptions): Promise<BaseBackupManifest> {
  return oneAtATime(options, async () => {
    const config = await requireArchiveConfig(options.stateDir)
    return baseBackupOn(options.pool, options, config.dir)
  })
}

async function requireArchiveConfig(stateDir: string) {
  const config = await readArchiveConfig(embeddedServerPaths(stateDir))
  if (!config) {
    throw new FleetkitError('ARCHIVE_NOT_ENABLED', 'the embedded server does not archive its WAL', {
      actions: ['fleetkit db archive enable DIR'],
      data: { stateDir },
    })
  }
  return config
}

export interface ArchiveDisableResult {
  dir: string
  changed: boolean
}

/** Archiving off (a restart); the directory and what it holds stay. */
export function disableArchiving(options: ArchiveOptions): Promise<ArchiveDisableResult> {
  return oneAtATime(options, () => disableLocked(options))
}

async function disableLocked(options: ArchiveOptions): Promise<ArchiveDisableResult> {
  const paths = embeddedServerPaths(options.stateDir)
  const config = await readArchiveConfig(paths)
  const { pool } = options
  const status = await readArchiverStatus(pool)
  if (!status.enabled && !config) return { dir: '', changed: false }
  await resetArchiveSettings(pool)
  await restart(options)
  await removeArchiveConfig(paths)
  await appendEvent(pool, { kind: 'wal_archiving_disabled', data: { dir: config?.dir ?? null } })
  return { dir: config?.dir ?? '', changed: true }
}

/**
 * `db archive prune`: the archive named by --archive, or the one recorded; files only, so it works
 * with the server down (a full disk, often why one prunes, may have stopped it).
 */
export async function pruneArchiveOf(options: {
  stateDir: string
  env: Env
  archiveDir?: string
  keep: number
  dryRun: boolean
  progress: (message: string) => void
}): Promise<ArchivePruneResult> {
  requireEmbedded(options.env)
  const dir = options.archiveDir
    ? checkArchiveDir(options.archiveDir)
    : (await requireArchiveConfig(options.stateDir)).dir
  const layout = archiveLayout(dir)
  const info = await stat(layout.baseDir).catch(() => undefined)
  if (!info?.isDirectory()) {
    throw new FleetkitError('ARCHIVE_DIR_INVALID', `${dir} is not a WAL archive (no base/ directory in it)`, {
      actions: ['fleetkit db status (shows the archive directory)', 'fleetkit db archive prune --archive DIR'],
      data: { dir },
    })
  }
  return pruneArchive({ layout, keep: options.keep, dryRun: options.dryRun, progress: options.progress })
}
