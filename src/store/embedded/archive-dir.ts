// The embedded server's archive directory: where its archive_command copies each finished WAL
// segment (`wal/`) and where base backups go (`base/`); recorded in `<state>/postgres/archive.json`
// so `db status` and `db restore --to` find it without a running server. The directory may be a
// mounted bucket: nothing here needs more than files, renames and fsync.
import { chown, readFile, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { type FileLockOptions, LockTimeoutError, withFileLock } from '../../fs/file-lock.js'
import type { UnixIds } from '../postgres-binaries.js'
import type { EmbeddedServerPaths } from './paths.js'
import { writeStateJsonFile } from './state-json-file.js'
import { makeDirectories } from '../../fs/make-directories.js'

export interface ArchiveConfig {
  dir: string
  /** @format date-time */
  enabledAt: string
}

export interface ArchiveLayout {
  dir: string
  /** One file per WAL segment (and timeline history), named as PostgreSQL names them. */
  walDir: string
  /** One `<label>.tar.gz` and `<label>.json` per base backup. */
  baseDir: string
}

export function archiveLayout(dir: string): ArchiveLayout {
  return { dir, walDir: join(dir, 'wal'), baseDir: join(dir, 'base') }
}

/**
 * Runs `fn` holding the archive's lock (`DIR/archive.lock`, broken when its holder died): a prune and a
 * restore to a time never run over the same archive at once. ARCHIVE_BUSY after `timeoutMs`.
 */
export async function withArchiveLock<T>(layout: ArchiveLayout, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  // No directory, nothing in it to guard: `fn` says what is missing (no base backup).
  if (!(await stat(layout.dir).catch(() => undefined))?.isDirectory()) return fn()
  return lockOrBusy(join(layout.dir, 'archive.lock'), `the archive ${layout.dir}`, fn, { timeoutMs })
}

/**
 * Runs `fn` holding `<state>/postgres/archive-admin.lock`: the commands that change how the embedded
 * server archives or restart it (enable, disable, base-backup, restore --to) run one at a time; a
 * second one says whom it waits for and waits up to 15 minutes (a base backup can take minutes).
 */
export function withArchiveAdminLock<T>(
  paths: EmbeddedServerPaths,
  progress: (message: string) => void,
  fn: () => Promise<T>,
): Promise<T> {
  return lockOrBusy(join(paths.root, 'archive-admin.lock'), `the embedded server's archiving in ${paths.root}`, fn, {
    timeoutMs: 15 * 60_000,
    onWait: (pid) => progress(`Waiting for another fleetkit db archive or restore command (PID ${pid}) to finish`),
  })
}

/**
 * Runs `fn` holding `<state>/postgres/archive-ship.lock`: one `db archive ship` or `verify --remote` at a
 * time (a timer's run that overlaps a slow one waits 5 s, then ARCHIVE_BUSY; the next tick ships).
 */
export function withArchiveShipLock<T>(paths: EmbeddedServerPaths, fn: () => Promise<T>): Promise<T> {
  return lockOrBusy(join(paths.root, 'archive-ship.lock'), `the off-host archive of ${paths.root}`, fn, {
    timeoutMs: 5_000,
  })
}

async function lockOrBusy<T>(path: string, what: string, fn: () => Promise<T>, options: FileLockOptions): Promise<T> {
  try {
    return await withFileLock(path, fn, options)
  } catch (error) {
    // Only this lock's timeout: one `fn` waited for (the server's start lock) has a code of its own.
    if (!(error instanceof LockTimeoutError) || error.path !== path) throw error
    throw new FleetkitError(
      'ARCHIVE_BUSY',
      `another fleetkit command${error.holder ? ` (PID ${error.holder})` : ''} is using ${what}; nothing was changed`,
      {
        actions: ['run it again once the other command has finished', error.removeAction],
        data: { lock: path, holder: error.holder ?? null },
      },
    )
  }
}

function archiveConfigFile(paths: EmbeddedServerPaths): string {
  return join(paths.root, 'archive.json')
}

/**
 * The directory goes into a shell command PostgreSQL runs (and `%` is its own escape there), so
 * only a plain absolute path is taken: letters, digits, `.`, `_`, `-` and `/`, no `..` segment.
 */
export function checkArchiveDir(dir: string): string {
  const trimmed = dir.replace(/\/+$/, '')
  if (!/^\/[A-Za-z0-9._/-]+$/.test(trimmed) || trimmed.split('/').includes('..') || trimmed.length > 512) {
    throw new FleetkitError(
      'ARCHIVE_DIR_INVALID',
      `the archive directory ${JSON.stringify(dir.slice(0, 100))} is not an absolute path of letters, digits and . _ - /`,
      {
        actions: [
          'fleetkit db archive enable /var/backups/fleetkit-wal (or a mounted bucket such as /mnt/bucket/fleetkit)',
        ],
        data: { dir: dir.slice(0, 512) },
      },
    )
  }
  return trimmed
}

/**
 * The command PostgreSQL runs for each finished segment (%p its path, %f its name). A copy that
 * is there already with the same bytes succeeds (a retry after a crash between copy and report);
 * one with other bytes fails, so a second server never overwrites this one's archive. The copy
 * lands under a temporary name, is fsynced, then renamed: a reader never sees half a segment.
 */
export function archiveCommand(dir: string): string {
  const wal = archiveLayout(checkArchiveDir(dir)).walDir
  return `f='${wal}/%f'; if test -f "$f"; then cmp -s '%p' "$f"; else cp '%p' "$f.part" && sync "$f.part" && mv "$f.part" "$f" && sync '${wal}'; fi`
}

/** The command a recovering server fetches segments with (a missing one ends the recovery there). */
export function restoreCommand(dir: string): string {
  const wal = archiveLayout(checkArchiveDir(dir)).walDir
  return `cp '${wal}/%f' '%p'`
}

export async function readArchiveConfig(paths: EmbeddedServerPaths): Promise<ArchiveConfig | undefined> {
  try {
    const parsed = JSON.parse(await readFile(archiveConfigFile(paths), 'utf8')) as Partial<ArchiveConfig>
    return typeof parsed.dir === 'string' && typeof parsed.enabledAt === 'string'
      ? { dir: parsed.dir, enabledAt: parsed.enabledAt }
      : undefined
  } catch {
    return undefined
  }
}

export async function writeArchiveConfig(paths: EmbeddedServerPaths, config: ArchiveConfig): Promise<void> {
  await writeStateJsonFile(archiveConfigFile(paths), config)
}

export async function removeArchiveConfig(paths: EmbeddedServerPaths): Promise<void> {
  await rm(archiveConfigFile(paths), { force: true })
}

/**
 * Makes `wal/` and `base/` (0700). The server's user (`postgres` when fleetkit runs as root) owns
 * `wal/` and must pass through the directory; base backups are written by fleetkit itself.
 */
export async function prepareArchiveDir(dir: string, runAs: UnixIds | undefined): Promise<ArchiveLayout> {
  const layout = archiveLayout(checkArchiveDir(dir))
  try {
    await makeDirectories(layout.dir, 0o711)
    const info = await stat(layout.dir)
    if (!info.isDirectory()) throw new Error(`${layout.dir} is not a directory`)
    await makeDirectories(layout.walDir, 0o700)
    await makeDirectories(layout.baseDir, 0o700)
    if (runAs) await chown(layout.walDir, runAs.uid, runAs.gid)
  } catch (error) {
    if (error instanceof FleetkitError) throw error
    throw new FleetkitError(
      'ARCHIVE_DIR_INVALID',
      `the archive directory ${layout.dir} cannot be prepared: ${(error as Error).message}`,
      {
        actions: [`check that ${layout.dir} can be created and written here`, 'fleetkit db status'],
        data: { dir: layout.dir },
      },
    )
  }
  return layout
}

/** The embedded server only: a DATABASE_URL server is archived by whoever runs it. */
export function requireEmbedded(env: Record<string, string | undefined>): void {
  if (env.DATABASE_URL?.trim()) {
    throw new FleetkitError(
      'ARCHIVE_NOT_EMBEDDED',
      'DATABASE_URL is set: continuous archiving is for the embedded server; archive that server with its own tools',
      { actions: ['unset DATABASE_URL to manage the embedded server', 'docs/scale-out.md (a managed PostgreSQL)'] },
    )
  }
}
