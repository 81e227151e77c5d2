// `fleetkit db backup`: the state database as one consistent logical snapshot (every table read in
// one REPEATABLE READ transaction: the embedded server ships no pg_dump, and a managed PostgreSQL
// may not let us run one), and the PKI directory beside it, in one gzip'd tar written 0600 and
// renamed into place only when whole. manifest.json, the last member, names every other member's
// SHA-256: restore verifies them all before it changes anything.
import { constants, existsSync } from 'node:fs'
import { link, lstat, mkdir, open, readdir, rm, stat, unlink } from 'node:fs/promises'
import { hostname } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'

import type { StatePool } from '../../store/transaction.js'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { type Rng, systemRng } from '../../config/rng.js'
import { syncDirectory } from '../../fs/atomic-file.js'
import { processIsAlive } from '../../fs/file-lock.js'
import { assertSecretOutsideGit, type GitRunner } from '../../fs/output-in-git.js'
import { type ArchiveFile, createTarGz, type OpenArchiveFile, type TarMember } from '../../fs/tar-gz.js'
import { withPath, writeAll } from '../../fs/write-all.js'
import { withPkiLock } from '../../pki/pki-lock.js'
import { exportSnapshot, type SnapshotSequence } from '../../store/backup/snapshot-export.js'
import type { TableColumn } from '../../store/backup/schema-objects.js'
import { makeDirectories } from '../../fs/make-directories.js'

export const BACKUP_FORMAT = 'fleetkit-backup'
export const BACKUP_FORMAT_VERSION = 1

export interface BackupManifest {
  format: typeof BACKUP_FORMAT
  formatVersion: number
  createdAt: string
  /** The snapshot's instant on the database's clock. */
  takenAt: string
  schemaVersion: number
  postgresVersion: string
  tables: { name: string; columns: TableColumn[]; rows: number; member: string; sha256: string }[]
  sequences: SnapshotSequence[]
  /** The PKI directory's files (the CA key among them); empty when there was none. */
  pki: { member: string; sha256: string; mode: number }[]
}

export interface BackupResult {
  file: string
  /** @pattern ^[0-9a-f]{64}$ */
  sha256: string
  /** @minimum 0 */
  bytes: number
  /** Always 0600: the file holds the CA key and the secrets' hashes. */
  mode: '0600'
  /** @format date-time */
  takenAt: string
  schemaVersion: number
  tables: { name: string; rows: number }[]
  /** The PKI directory's files included; empty when it did not exist. */
  pkiFiles: string[]
  /** What interrupted backups on this host left beside the output (their writer is gone), removed by this run. */
  removedStaleFiles: string[]
}

function backupExists(file: string): FleetkitError {
  return new FleetkitError(
    'BACKUP_OUTPUT_EXISTS',
    `${file} exists; a backup never overwrites a file, nothing was written`,
    {
      actions: [`fleetkit db backup --out ${file}.new`, `mv ${file} ${file}.old`],
      data: { file },
    },
  )
}

/** The default name: fleetkit-backup-<UTC time>.tar.gz in the working directory. */
export function defaultBackupName(now: Date): string {
  return `fleetkit-backup-${now
    .toISOString()
    .replace(/[:.]/g, '')
    .replace(/\d{3}Z$/, 'Z')}.tar.gz`
}

/**
 * This host as staging names carry it: a PID means something only on the host (and in the PID
 * namespace, which a container's own hostname tells apart) that wrote it, and a backup directory
 * may be shared (NFS).
 */
function hostTag(): string {
  return (
    hostname()
      .replace(/[^A-Za-z0-9-]/g, '-')
      .slice(0, 32) || 'host'
  )
}

/**
 * Where a backup stages, beside the output (same filesystem: link() puts it in place):
 * `.<name>.<host>-<pid>.<12 hex>.rows/` holds the row files, `.<name>.<host>-<pid>.<12 hex>.tmp` the
 * archive. The PID tells a later backup whether the writer is gone (removeStaleStaging).
 */
export function stagingPaths(file: string, rng: Rng = systemRng): { rows: string; archive: string } {
  const stem = join(dirname(file), `.${basename(file)}.${hostTag()}-${process.pid}.${rng(6).toString('hex')}`)
  return { rows: `${stem}.rows`, archive: `${stem}.tmp` }
}

/**
 * Removes what backups killed on this host left in `dir` (a SIGKILL, a power cut: no handler ran),
 * for any output name, since a timer names each backup anew: only fleetkit's exact staging names,
 * only this host's, only when their PID is no live process. Each is a full copy of the CA key.
 * Best effort: what cannot be removed (another user's) stays, and the backup goes on.
 */
async function removeStaleStaging(dir: string, isAlive: (pid: number) => boolean = processIsAlive): Promise<string[]> {
  const pattern = new RegExp(`^\\..+\\.${hostTag()}-(\\d+)\\.[0-9a-f]{12}\\.(tmp|rows)$`)
  const names = await readdir(dir).catch(() => [] as string[])
  const removed: string[] = []
  for (const name of names.sort()) {
    const match = pattern.exec(name)
    if (!match) continue
    const pid = Number(match[1])
    if (pid === process.pid || isAlive(pid)) continue
    const path = join(dir, name)
    const info = await lstat(path).catch(() => undefined)
    // What a backup makes, never through a link: the archive a file, the rows a directory.
    if (!info || !(match[2] === 'rows' ? info.isDirectory() : info.isFile())) continue
    const gone = await rm(path, { recursive: true, force: true }).then(
      () => true,
      () => false,
    )
    if (gone) removed.push(name)
  }
  return removed
}

/** The PKI directory's plain files, read whole (they are small): the copy is taken under the PKI lock. */
async function readPkiFiles(pkiDir: string): Promise<{ name: string; data: Buffer; mode: number }[]> {
  if (!existsSync(pkiDir)) return []
  const files: { name: string; data: Buffer; mode: number }[] = []
  for (const name of (await readdir(pkiDir)).sort()) {
    // Plain files only: a half-written temp file (`.name.hex.tmp`) and the lock are not the PKI.
    if (name.startsWith('.')) continue
    const path = join(pkiDir, name)
    const info = await stat(path)
    if (!info.isFile()) continue
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW)
    try {
      files.push({ name, data: await handle.readFile(), mode: info.mode & 0o777 })
    } finally {
      await handle.close()
    }
  }
  return files
}

export async function backupState(options: {
  pool: StatePool
  pkiDir: string
  out: string
  now: Date
  progress?: (message: string) => void
  /** Write it inside a Git work tree that does not ignore it (SECRET_OUTPUT_IN_GIT otherwise). Never overwrites. */
  force?: boolean
  git?: GitRunner
  /** Opens the row files and the archive (tests give one that writes short or fails, as a full disk does). */
  open?: OpenArchiveFile
  /**
   * Ctrl-C or SIGTERM (the command is interruptible): the backup stops at its next step, removes its
   * staging and rejects with the signal's reason. Once the file is in place it is reported written.
   */
  signal?: AbortSignal
}): Promise<BackupResult> {
  const file = resolve(options.out)
  const progress = options.progress ?? (() => {})
  const signal = options.signal
  if (existsSync(file)) throw backupExists(file)
  // Checked for the default too: it is the current directory, often the fleet's repository.
  await assertSecretOutsideGit({
    path: file,
    what: 'the backup (the CA key and the state)',
    outside: 'fleetkit db backup --out /backups/fleet-$(date +%F).tar.gz   (outside any repository)',
    retry: `fleetkit db backup --out ${options.out}`,
    force: options.force === true,
    ...(options.git ? { git: options.git } : {}),
  })
  await makeDirectories(dirname(file))
  const removedStaleFiles = await removeStaleStaging(dirname(file))
  // Rows go to private temp files first (a tar member needs its size up front), beside the output.
  const { rows: work, archive: temp } = stagingPaths(file)
  const openFile = options.open ?? open
  const rowFiles = new Map<string, ArchiveFile>()
  try {
    // The PKI lock from before the snapshot until the PKI is read: a `ca rotate` (which takes the PKI
    // lock, then the database) is wholly before this backup or wholly after it, never in the database
    // part and not the PKI part. The same order as every PKI command: the lock, then the database.
    const { snapshot, pkiFiles } = await withPkiLock(
      options.pkiDir,
      async () => {
        signal?.throwIfAborted()
        await mkdir(work, 0o700)
        progress('reading the state in one consistent snapshot')
        // Plain awaited writes, not streams: a full disk is an error thrown here (then the finally below
        // removes `work`), never an 'error' event that kills the process and leaves `work` behind.
        const snapshot = await exportSnapshot(options.pool, async (table, lines) => {
          signal?.throwIfAborted()
          const path = join(work, `${table}.jsonl`)
          let out = rowFiles.get(table)
          if (!out) {
            out = await openFile(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600)
            rowFiles.set(table, out)
          }
          await writeAll(out, Buffer.from(`${lines.join('\n')}\n`), path)
        })
        signal?.throwIfAborted()
        return { snapshot, pkiFiles: await readPkiFiles(options.pkiDir) }
      },
      { readOnly: true, signal },
    )
    for (const [table, out] of rowFiles) {
      rowFiles.delete(table)
      await out.close().catch((error: unknown) => {
        throw withPath(error, join(work, `${table}.jsonl`))
      })
    }
    if (snapshot.schemaVersion === null) {
      throw new FleetkitError('BACKUP_INVALID', 'the database holds no fleetkit schema: nothing to back up', {
        actions: ['fleetkit db status'],
      })
    }
    progress(`writing ${file}`)
    const archive = await createTarGz(temp, {
      mode: 0o600,
      mtime: options.now,
      ...(options.open ? { open: options.open } : {}),
    })
    const tables: BackupManifest['tables'] = []
    const pki: BackupManifest['pki'] = []
    try {
      for (const table of snapshot.tables) {
        signal?.throwIfAborted()
        const path = join(work, `${table.name}.jsonl`)
        const member = `db/${table.name}.jsonl`
        const added: TarMember = existsSync(path)
          ? await archive.addFile(member, path)
          : await archive.addBytes(member, new Uint8Array())
        tables.push({ name: table.name, columns: table.columns, rows: table.rows, member, sha256: added.sha256 })
      }
      for (const { name, data, mode } of pkiFiles) {
        const added = await archive.addBytes(`pki/${name}`, data, mode)
        pki.push({ member: added.name, sha256: added.sha256, mode })
      }
      const manifest: BackupManifest = {
        format: BACKUP_FORMAT,
        formatVersion: BACKUP_FORMAT_VERSION,
        createdAt: options.now.toISOString(),
        takenAt: snapshot.takenAt.toISOString(),
        schemaVersion: snapshot.schemaVersion,
        postgresVersion: snapshot.postgresVersion,
        tables,
        sequences: snapshot.sequences,
        pki,
      }
      await archive.addBytes('manifest.json', Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`))
    } catch (error) {
      await archive.abort()
      throw error
    }
    const whole = await archive.finish()
    // The last point to stop: from the link on, the backup exists and is reported written.
    signal?.throwIfAborted()
    // link() fails if the name exists: a backup written meanwhile by another process is never replaced.
    await link(temp, file).catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'EEXIST' ? backupExists(file) : error
    })
    await syncDirectory(dirname(file))
    return {
      file,
      sha256: whole.sha256,
      bytes: whole.size,
      mode: '0600',
      takenAt: snapshot.takenAt.toISOString(),
      schemaVersion: snapshot.schemaVersion,
      tables: tables.map((t) => ({ name: t.name, rows: t.rows })),
      pkiFiles: pki.map((p) => p.member.slice('pki/'.length)),
      removedStaleFiles,
    }
  } finally {
    for (const out of rowFiles.values()) await out.close().catch(() => undefined)
    await unlink(temp).catch(() => undefined)
    await rm(work, { recursive: true, force: true })
  }
}
