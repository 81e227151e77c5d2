// Pruning the WAL archive (`fleetkit db archive prune`): keep the newest N base backups whose file is
// whole, remove the older ones, then every WAL file positioned before the oldest kept backup's start
// (no restore can use it: a restore replays from its base backup's start onwards). It needs only the
// files, never the server: a full disk, often the reason to prune, may have stopped it.
import { readdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'

import { type ArchiveLayout, withArchiveLock } from './archive-dir.js'
import { type BaseBackupManifest, fileSha256, listBaseBackups } from './base-backup.js'

export interface ArchivePruneResult {
  dir: string
  /**
   * @minimum 1
   * @asType integer
   */
  keep: number
  dryRun: boolean
  /** The base backups kept, oldest first (the whole ones counted toward --keep, and any newer). */
  kept: string[]
  /** The base backups removed (or, with --dry-run, that would be). */
  removed: string[]
  /** Base backups newer than the oldest kept whose file is missing or fails its SHA-256: not counted toward --keep, kept. */
  damaged: string[]
  /** The first WAL segment position kept (timeline left out); null when there are fewer whole base backups than --keep (nothing removed). */
  oldestKeptWal: string | null
  /**
   * @minimum 0
   * @asType integer
   */
  removedWalFiles: number
  /**
   * @minimum 0
   * @asType integer
   */
  freedBytes: number
}

/** 16 MiB: the embedded server's segment size (initdb's default; fleetkit never changes it). */
const SEGMENT_BYTES = 16 * 1024 * 1024

/** The log and segment part of a WAL file name (its position, the timeline left out) holding an LSN such as 0/2000028. */
const LSN = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/

export function walPositionOf(lsn: string): string {
  const match = LSN.exec(lsn)
  if (!match) throw new TypeError(`not an LSN: ${lsn}`)
  const log = Number.parseInt(match[1]!, 16)
  const segment = Math.floor(Number.parseInt(match[2]!, 16) / SEGMENT_BYTES)
  const hex8 = (n: number) => n.toString(16).toUpperCase().padStart(8, '0')
  return hex8(log) + hex8(segment)
}

/**
 * A file of the archive's wal/ that pruning may remove, with its position: a segment, a backup history
 * file (`<segment>.<offset>.backup`), a partial segment or an archive_command copy a crash left. Timeline
 * history files (`<tli>.history`) are small and every later timeline needs them: never removed.
 */
function walFilePosition(name: string): string | undefined {
  const match = /^[0-9A-F]{8}([0-9A-F]{16})(\.[0-9A-F]{8}\.backup|\.partial|\.part)?$/.exec(name)
  return match?.[1]
}

export async function pruneArchive(options: {
  layout: ArchiveLayout
  keep: number
  dryRun: boolean
  progress: (message: string) => void
  /** How long to wait for a restore to a time reading the archive (default 5 s). */
  lockTimeoutMs?: number
}): Promise<ArchivePruneResult> {
  // A restore to a time holds the same lock while it reads the archive.
  return withArchiveLock(options.layout, options.lockTimeoutMs ?? 5_000, () => pruneLocked(options))
}

async function pruneLocked(options: {
  layout: ArchiveLayout
  keep: number
  dryRun: boolean
  progress: (message: string) => void
}): Promise<ArchivePruneResult> {
  const { layout, keep, dryRun } = options
  const backups = await listBaseBackups(layout)
  options.progress(`Checking the base backups in ${layout.baseDir}`)
  const { whole, damaged } = await newestWhole(layout, backups, keep)
  const result: ArchivePruneResult = {
    dir: layout.dir,
    keep,
    dryRun,
    kept: backups.map((b) => b.label),
    removed: [],
    damaged: damaged.map((b) => b.label),
    oldestKeptWal: null,
    removedWalFiles: 0,
    freedBytes: 0,
  }
  // Fewer whole backups than asked for: nothing is old enough to go.
  if (whole.length < keep) return result
  const oldest = whole[whole.length - 1]!
  const old = backups.filter((b) => b.stoppedAt < oldest.stoppedAt)
  result.kept = backups.filter((b) => !old.includes(b)).map((b) => b.label)
  result.removed = old.map((b) => b.label)
  result.oldestKeptWal = walPositionOf(oldest.startLsn)
  const remove = async (path: string) => {
    const info = await stat(path).catch(() => undefined)
    if (!info) return false
    result.freedBytes += info.size
    if (!dryRun) await rm(path, { force: true })
    return true
  }
  for (const b of old) {
    // The manifest first: a backup whose tar is half gone is then never chosen.
    await remove(join(layout.baseDir, `${b.label}.json`))
    await remove(join(layout.baseDir, b.file))
  }
  // What an interrupted base backup or prune left: a tar with no manifest, older than the oldest kept.
  for (const name of await readdir(layout.baseDir).catch(() => [] as string[])) {
    const label = /^(base-[0-9TZ]+(?:-\d+)?)\.tar\.gz(\.part)?$/.exec(name)?.[1]
    if (label && label < oldest.label && !backups.some((b) => b.file === name)) await remove(join(layout.baseDir, name))
  }
  const walNames = (await readdir(layout.walDir).catch(() => [] as string[])).sort()
  options.progress(`${dryRun ? 'Would remove' : 'Removing'} the WAL before ${result.oldestKeptWal}`)
  for (const name of walNames) {
    const position = walFilePosition(name)
    if (position !== undefined && position < result.oldestKeptWal && (await remove(join(layout.walDir, name))))
      result.removedWalFiles++
  }
  return result
}

/** Newest first until `keep` whole ones are found: their files' SHA-256 is read, as a restore would. */
async function newestWhole(
  layout: ArchiveLayout,
  backups: BaseBackupManifest[],
  keep: number,
): Promise<{ whole: BaseBackupManifest[]; damaged: BaseBackupManifest[] }> {
  const whole: BaseBackupManifest[] = []
  const damaged: BaseBackupManifest[] = []
  for (const b of [...backups].reverse()) {
    if (whole.length === keep) break
    const sha = await fileSha256(join(layout.baseDir, b.file)).catch(() => '')
    // A manifest whose start is not an LSN cannot say which WAL it needs: damaged, as a bad file is.
    if (sha === b.sha256 && typeof b.startLsn === 'string' && LSN.test(b.startLsn)) whole.push(b)
    else damaged.push(b)
  }
  return { whole, damaged }
}
