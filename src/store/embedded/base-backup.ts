// A base backup of the embedded server while it runs: PostgreSQL's non-exclusive backup API
// (pg_backup_start, copy the data directory, pg_backup_stop on the same session) into one gzip'd
// tar in the archive's base/ directory, with a manifest beside it. The copy may read files mid-write;
// replaying the WAL archived from the start to the stop point repairs them (as with pg_basebackup),
// and pg_backup_stop waits until that WAL is in the archive, so a finished backup is restorable.
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { lstat, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

import type pg from 'pg'

import { createTarGz } from '../../fs/tar-gz.js'
import { startBaseBackup, stopBaseBackup } from '../backup/wal-archive.js'
import type { ArchiveLayout } from './archive-dir.js'

export interface BaseBackupManifest {
  format: 'fleetkit-base-backup-1'
  label: string
  file: string
  /** @format date-time */
  startedAt: string
  /** @format date-time */
  stoppedAt: string
  startLsn: string
  stopLsn: string
  /** @asType integer */
  timeline: number
  systemIdentifier: string
  sha256: string
  /**
   * @minimum 0
   * @asType integer
   */
  bytes: number
  /**
   * @minimum 0
   * @asType integer
   */
  files: number
}

/** What pg_basebackup leaves out too: runtime state a restored server rebuilds, and the WAL (fetched from the archive). */
const SKIP_CONTENTS = new Set([
  'pg_wal',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_stat_tmp',
  'pg_subtrans',
  'pg_replslot',
])
const SKIP_FILES = new Set([
  'postmaster.pid',
  'postmaster.opts',
  'backup_label',
  'backup_label.old',
  'tablespace_map',
  'current_logfiles',
  'recovery.signal',
  'standby.signal',
])

export function baseBackupLabel(now: Date): string {
  return `base-${now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}`
}

export async function takeBaseBackup(options: {
  client: pg.ClientBase
  dataDir: string
  layout: ArchiveLayout
  label: string
  progress: (message: string) => void
}): Promise<BaseBackupManifest> {
  const { client, dataDir, layout } = options
  const { label, partial, tar } = await openBackupFile(layout, options.label)
  const file = `${label}.tar.gz`
  try {
    const started = await startBaseBackup(client, label)
    options.progress(`Copying the data directory ${dataDir}`)
    const files = await copyTree(tar, dataDir, '')
    const stopped = await stopBaseBackup(client)
    await tar.addBytes('backup_label', Buffer.from(stopped.labelFile, 'utf8'))
    if (stopped.tablespaceMap !== '') await tar.addBytes('tablespace_map', Buffer.from(stopped.tablespaceMap, 'utf8'))
    const written = await tar.finish()
    const manifest: BaseBackupManifest = {
      format: 'fleetkit-base-backup-1',
      label,
      file,
      startedAt: started.startedAt.toISOString(),
      stoppedAt: stopped.stoppedAt.toISOString(),
      startLsn: started.startLsn,
      stopLsn: stopped.stopLsn,
      timeline: started.timeline,
      systemIdentifier: started.systemIdentifier,
      sha256: written.sha256,
      bytes: written.size,
      files,
    }
    await rename(partial, join(layout.baseDir, file))
    // The manifest last: a backup without one is unfinished and never chosen for a restore.
    const manifestFile = join(layout.baseDir, `${label}.json`)
    await writeFile(`${manifestFile}.part`, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 })
    await rename(`${manifestFile}.part`, manifestFile)
    return manifest
  } catch (error) {
    await tar.abort().catch(() => undefined)
    await rm(partial, { force: true })
    // A session that ends aborts its backup too; this says so at once.
    await client.query('SELECT pg_backup_stop(false)').catch(() => undefined)
    throw error
  }
}

/**
 * The backup's partial file, created exclusively under the first free label: `label`, then `label-2`...
 * Two base backups begun in the same second (two operators, a timer and a person) never share a file,
 * and a partial file a crash left is never reused (a prune removes it once it is older than what it keeps).
 */
async function openBackupFile(
  layout: ArchiveLayout,
  label: string,
): Promise<{ label: string; partial: string; tar: Awaited<ReturnType<typeof createTarGz>> }> {
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? label : `${label}-${n}`
    const taken = async (name: string) => (await lstat(join(layout.baseDir, name)).catch(() => undefined)) !== undefined
    if ((await taken(`${candidate}.tar.gz`)) || (await taken(`${candidate}.json`))) continue
    const partial = join(layout.baseDir, `${candidate}.tar.gz.part`)
    try {
      return { label: candidate, partial, tar: await createTarGz(partial) }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || n >= 100) throw error
    }
  }
}

/** Regular files and directories under `dir` into the tar; a file gone while the copy runs is skipped. */
async function copyTree(tar: Awaited<ReturnType<typeof createTarGz>>, root: string, relative: string): Promise<number> {
  let count = 0
  const here = relative === '' ? root : join(root, relative)
  const entries = await readdir(here).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [] as string[]
    throw error
  })
  for (const name of entries.sort()) {
    const path = join(here, name)
    const member = relative === '' ? name : `${relative}/${name}`
    if (relative === '' && SKIP_FILES.has(name)) continue
    if (name.startsWith('pgsql_tmp') || name === 'pg_internal.init') continue
    const info = await lstat(path).catch(() => undefined)
    if (!info) continue
    if (info.isDirectory()) {
      await tar.addDirectory(member, info.mode & 0o7777)
      // The directory stays (a server needs it); what it holds is rebuilt or fetched.
      if (relative === '' && SKIP_CONTENTS.has(name)) {
        if (name === 'pg_wal') await tar.addDirectory('pg_wal/archive_status', 0o700)
        continue
      }
      count += await copyTree(tar, root, member)
    } else if (info.isFile()) {
      try {
        await tar.addFile(member, path)
        count++
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      }
    }
  }
  return count
}

/** The base backups in the archive whose manifest is there and names its file, oldest first. */
export async function listBaseBackups(layout: ArchiveLayout): Promise<BaseBackupManifest[]> {
  const names = await readdir(layout.baseDir).catch(() => [] as string[])
  const manifests: BaseBackupManifest[] = []
  for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
    try {
      const parsed = JSON.parse(await readFile(join(layout.baseDir, name), 'utf8')) as Partial<BaseBackupManifest>
      if (
        parsed.format === 'fleetkit-base-backup-1' &&
        typeof parsed.file === 'string' &&
        /^[A-Za-z0-9._-]+\.tar\.gz$/.test(parsed.file) &&
        typeof parsed.stoppedAt === 'string' &&
        typeof parsed.sha256 === 'string'
      )
        manifests.push(parsed as BaseBackupManifest)
    } catch {
      // Not a manifest of ours (or half-written by hand): not a candidate.
    }
  }
  return manifests.sort((a, b) => a.stoppedAt.localeCompare(b.stoppedAt))
}

/** The SHA-256 of a file, streamed. */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}
