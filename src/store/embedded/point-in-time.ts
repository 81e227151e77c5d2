// `fleetkit db restore --to TIME` for the embedded server: the newest base backup that ended at or
// before TIME, unpacked beside the data directory, then PostgreSQL's own archive recovery replays the
// archived WAL up to TIME and promotes. The data directory it replaces is renamed aside, never deleted;
// if the replay cannot reach TIME (it lies past the archive's end) the old directory is put back.
import { existsSync } from 'node:fs'
import { appendFile, chown, mkdir, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

import pg from 'pg'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { LockTimeoutError, withFileLock } from '../../fs/file-lock.js'
import { extractTarGz } from '../../fs/tar-gz.js'
import { postgresRunAs } from '../postgres-binaries.js'
import { recoveryProgress, resetRecoverySettings } from '../backup/wal-archive.js'
import {
  archiveLayout,
  type ArchiveLayout,
  checkArchiveDir,
  readArchiveConfig,
  restoreCommand,
  withArchiveAdminLock,
  withArchiveLock,
} from './archive-dir.js'
import { type BaseBackupManifest, fileSha256, listBaseBackups } from './base-backup.js'
import {
  EMBEDDED_DATABASE,
  EMBEDDED_HOST,
  EMBEDDED_USER,
  embeddedServerPaths,
  type EmbeddedServerPaths,
} from './paths.js'
import { readPasswordFile } from './password-file.js'
import { prepareDirectories } from './permissions.js'
import { isPostgresProcess, readPostmasterPid } from './postmaster.js'
import { logReason, logSize, startServer } from './process.js'
import { waitUntilGone } from './readiness.js'
import { ensureEmbeddedServer, startLockBusy, stopHoldingLock } from './server.js'

export interface PointInTimeResult {
  /** @format date-time */
  target: string
  archiveDir: string
  baseBackup: string
  /** @format date-time */
  baseBackupStoppedAt: string
  /** The commit time of the last transaction replayed (null: none after the base backup). */
  recoveredTo: string | null
  /** The LSN of the last WAL record replayed (how far into the archive the replay went). */
  replayedLsn: string | null
  /** Where the data directory that was replaced now is; null when there was none (a state directory rebuilt). */
  keptAside: string | null
}

/** An ISO 8601 time with its zone (Z or ±hh:mm): a time without one would mean the machine's zone. */
export function parseRestoreTime(text: string): Date {
  const match = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})$/.test(text.trim())
  const date = new Date(text.trim())
  if (!match || Number.isNaN(date.getTime())) {
    throw new FleetkitError(
      'USAGE_INVALID',
      `--to ${JSON.stringify(text.slice(0, 40))} is not an ISO 8601 time with a zone`,
      {
        actions: ['fleetkit db restore --to 2026-12-04T09:30:00Z'],
      },
    )
  }
  return date
}

/** How a restore replays: to `target`, or (`toEnd`) through every segment the archive holds. */
export interface RestoreOptions {
  stateDir: string
  /** With toEnd, only chooses the base backup (the newest that ended by then). */
  target: Date
  /** Replay to the archive's end (`db restore --to latest`): no recovery target, nothing to fall short of. */
  toEnd?: boolean
  /** 'off': the restored server does not archive (a scratch restore must not write into the archive it read). */
  archiving?: 'keep' | 'off'
  archiveDir?: string
  now: Date
  progress: (message: string) => void
  timeoutMs?: number
}

export async function restoreToTime(options: RestoreOptions): Promise<PointInTimeResult> {
  const paths = embeddedServerPaths(options.stateDir)
  const timeoutMs = options.timeoutMs ?? 600_000
  if (options.target.getTime() > options.now.getTime()) {
    throw new FleetkitError('USAGE_INVALID', `--to ${options.target.toISOString()} is in the future`, {
      actions: ['fleetkit db restore --to a time before now'],
    })
  }
  const dir = options.archiveDir ? checkArchiveDir(options.archiveDir) : (await readArchiveConfig(paths))?.dir
  if (!dir) {
    throw new FleetkitError('ARCHIVE_NOT_ENABLED', `no WAL archive is recorded in ${paths.root}`, {
      actions: ['fleetkit db restore --to TIME --archive DIR (the directory fleetkit db archive enable was given)'],
      data: { stateDir: options.stateDir },
    })
  }
  const layout = archiveLayout(dir)
  // The server's password stays in the state directory: the backup's roles know only its hash.
  const password = await readPasswordFile(paths.passwordFile).catch(() => {
    throw new FleetkitError(
      'ARCHIVE_NOT_ENABLED',
      `${paths.passwordFile} is missing: the restored server could not be reached`,
      {
        actions: ['restore the state directory from a fleetkit db backup file instead (fleetkit db restore FILE)'],
        data: { passwordFile: paths.passwordFile },
      },
    )
  })
  // One archive command at a time on this server; a prune of the archive waits until the replay is done
  // (it could remove the base backup or WAL in use).
  return withArchiveAdminLock(paths, options.progress, () =>
    withArchiveLock(layout, 60_000, () => restoreFromArchive(paths, layout, password, options, timeoutMs)),
  )
}

async function restoreFromArchive(
  paths: EmbeddedServerPaths,
  layout: ArchiveLayout,
  password: string,
  options: RestoreOptions,
  timeoutMs: number,
): Promise<PointInTimeResult> {
  const dir = layout.dir
  const base = await chooseBaseBackup(layout.baseDir, await listBaseBackups(layout), options.target)
  // As root on a new machine the `postgres` user may not exist yet: made here, as a first start makes it
  // (PostgreSQL refuses to run as root).
  const runAs = await postgresRunAs({ root: paths.root, create: true })
  // A state directory rebuilt by hand (its password copied, nothing else) gets the modes the server needs.
  await prepareDirectories(paths, runAs)
  const stamp = options.now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
  const keptAside = join(paths.root, `data.before-restore-${stamp}`)
  const staging = join(paths.root, 'data.restoring')

  options.progress(`Unpacking base backup ${base.label} (ended ${base.stoppedAt})`)
  await rm(staging, { recursive: true, force: true })
  await mkdir(staging, { mode: 0o700 })
  if (runAs) await chown(staging, runAs.uid, runAs.gid)
  try {
    await extractTarGz(join(layout.baseDir, base.file), staging, runAs ? { owner: runAs } : {})
    await writeRecoverySettings(staging, dir, options, runAs)
  } catch (error) {
    await rm(staging, { recursive: true, force: true })
    throw error
  }

  options.progress(
    `Stopping the embedded PostgreSQL server, replaying the archived WAL up to ${options.toEnd ? 'its end' : options.target.toISOString()}`,
  )
  let replaced: string | null
  try {
    replaced = await withFileLock(
      paths.lockFile,
      () => swapAndRecover(paths, staging, keptAside, password, timeoutMs),
      { timeoutMs },
    )
  } catch (error) {
    await rm(staging, { recursive: true, force: true })
    // Another process held the start lock all along: nothing was stopped or swapped, the server is as it was.
    if (error instanceof LockTimeoutError)
      throw startLockBusy(paths, error, timeoutMs, 'this restore waits; nothing was changed')
    // As it was: the old data directory is back in place and its server runs again; with none before,
    // none now (starting one would create an empty database).
    if (existsSync(paths.dataDir)) await ensureEmbeddedServer(options.stateDir).catch(() => undefined)
    throw error
  }
  const server = await ensureEmbeddedServer(options.stateDir)
  const client = embeddedClient(server.port, server.password)
  await client.connect()
  try {
    const progress = await recoveryProgress(client)
    await resetRecoverySettings(client)
    return {
      target: options.target.toISOString(),
      archiveDir: dir,
      baseBackup: base.label,
      baseBackupStoppedAt: base.stoppedAt,
      recoveredTo: progress.lastReplayedAt?.toISOString() ?? null,
      replayedLsn: progress.lastReplayedLsn,
      keptAside: replaced,
    }
  } finally {
    await client.end()
  }
}

/** The newest base backup that ended at or before the target whose file is whole. */
async function chooseBaseBackup(
  baseDir: string,
  backups: BaseBackupManifest[],
  target: Date,
): Promise<BaseBackupManifest> {
  const candidates = backups.filter((b) => new Date(b.stoppedAt).getTime() <= target.getTime()).reverse()
  const damaged: string[] = []
  for (const b of candidates) {
    const sha = await fileSha256(join(baseDir, b.file)).catch(() => '')
    if (sha === b.sha256) return b
    damaged.push(b.label)
  }
  throw new FleetkitError(
    'PITR_NO_BASE_BACKUP',
    backups.length === 0
      ? `${baseDir} holds no base backup`
      : `no whole base backup in ${baseDir} ended at or before ${target.toISOString()}${damaged.length > 0 ? ` (damaged: ${damaged.join(', ')})` : ` (the oldest ended ${backups[0]!.stoppedAt})`}`,
    {
      actions: ['choose a later time', 'fleetkit db status (lists the archive)'],
      data: { baseDir, target: target.toISOString(), damaged },
    },
  )
}

/** recovery.signal and the settings that drive the replay; removed from the configuration once it promoted. */
async function writeRecoverySettings(
  dataDir: string,
  archiveDir: string,
  options: Pick<RestoreOptions, 'target' | 'toEnd' | 'archiving'>,
  runAs: { uid: number; gid: number } | undefined,
): Promise<void> {
  const signal = join(dataDir, 'recovery.signal')
  await writeFile(signal, '', { mode: 0o600 })
  const conf = join(dataDir, 'postgresql.auto.conf')
  const quote = (value: string) => `'${value.replaceAll("'", "''")}'`
  await appendFile(
    conf,
    [
      '# fleetkit db restore --to: removed by ALTER SYSTEM RESET once the server promoted',
      `restore_command = ${quote(restoreCommand(archiveDir))}`,
      // Without a target the replay ends where the archive does and the server promotes there.
      ...(options.toEnd
        ? []
        : [
            // PostgreSQL's own timestamptz form: its check refuses ISO 8601's T and Z here.
            `recovery_target_time = ${quote(options.target.toISOString().replace('T', ' ').replace('Z', '+00'))}`,
            `recovery_target_action = 'promote'`,
          ]),
      // Later in the file than the backup's own archive_mode, so it wins.
      ...(options.archiving === 'off' ? [`archive_mode = 'off'`] : []),
      '',
    ].join('\n'),
    { mode: 0o600 },
  )
  if (runAs) {
    await chown(signal, runAs.uid, runAs.gid)
    await chown(conf, runAs.uid, runAs.gid)
  }
}

/** A connection of its own to the restored server's fleetkit database (not the pool: it is being replaced). */
function embeddedClient(port: number, password: string): pg.Client {
  const client = new pg.Client({
    host: EMBEDDED_HOST,
    port,
    user: EMBEDDED_USER,
    password,
    database: EMBEDDED_DATABASE,
  })
  client.on('error', () => undefined)
  return client
}

/** True once the server left recovery (promoted); false when it exited or the time ran out. */
async function promoted(
  pid: number,
  port: number,
  password: string,
  paths: EmbeddedServerPaths,
  deadline: number,
): Promise<boolean> {
  while (Date.now() < deadline) {
    if (!isPostgresProcess(pid, paths.dataDir)) return false
    const client = embeddedClient(port, password)
    try {
      await client.connect()
      if (!(await recoveryProgress(client)).inRecovery) return true
    } catch {
      // Starting up, or shutting down after a failed replay: the PID check above tells which.
    } finally {
      await client.end().catch(() => undefined)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return false
}

/**
 * Holding the start lock: the unpacked backup becomes the data directory and recovers; on failure the
 * old one comes back. Returns where the old one went, or null when there was none (a state directory
 * rebuilt on a new machine: then a failure leaves none either).
 */
async function swapAndRecover(
  paths: EmbeddedServerPaths,
  staging: string,
  keptAside: string,
  password: string,
  timeoutMs: number,
): Promise<string | null> {
  // Under the start lock from the stop on: nobody (a gateway restarting its server) starts the old one meanwhile.
  await stopHoldingLock(paths, 60_000)
  const aside = existsSync(paths.dataDir) ? keptAside : null
  if (aside) await rename(paths.dataDir, aside)
  try {
    await rename(staging, paths.dataDir)
  } catch (error) {
    if (aside) await rename(aside, paths.dataDir)
    throw error
  }
  const logFrom = logSize(paths.logFile)
  const started = await startServer(paths, timeoutMs)
  // Accepting connections is not done: a hot standby takes them while it still replays, and the
  // replay may yet end short of the target (then the server exits).
  if (started && (await promoted(started.pid, started.port, password, paths, Date.now() + timeoutMs))) return aside
  const why = logReason(paths.logFile, logFrom)
  // Still replaying when the time ran out: it must stop before its directory goes.
  const pm = await readPostmasterPid(paths.dataDir)
  if (pm && isPostgresProcess(pm.pid, paths.dataDir)) {
    process.kill(pm.pid, 'SIGKILL')
    await waitUntilGone(pm.pid, 30_000)
  }
  await rm(paths.dataDir, { recursive: true, force: true })
  if (aside) await rename(aside, paths.dataDir)
  throw new FleetkitError('PITR_TARGET_NOT_REACHED', `the replay stopped before the time asked for: ${why}`, {
    actions: ['fleetkit db status (the last archived WAL and its time)', 'fleetkit db restore --to an earlier TIME'],
    data: { logFile: paths.logFile },
  })
}
