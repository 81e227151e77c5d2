// The off-host archive's files as `db archive` reads and writes them (the SFTP implementation is
// src/sync/sftp-archive.ts), and how one file is shipped there: to NAME.part, read back and compared by
// SHA-256, renamed into place, then NAME.sha256 beside it. A file with its .sha256 is shipped.
import { createHash } from 'node:crypto'
import { stat } from 'node:fs/promises'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { ArchiveRemote } from '../../store/embedded/archive-remote.js'
import { fileSha256 } from '../../store/embedded/base-backup.js'

/**
 * The remote directory's files, as `db archive` needs them (src/sync/sftp-archive.ts over SFTP with the
 * host key pinned). Paths are relative to the remote archive directory (`wal/NAME`, `base/NAME`).
 */
export interface RemoteArchiveFiles {
  /** The names in a directory; [] when it does not exist. */
  list(dir: string): Promise<string[]>
  /** Makes the directory and its parents (0700). */
  mkdirs(dir: string): Promise<void>
  /** Copies a local file to `path`, fsynced before it is closed. */
  put(localPath: string, path: string): Promise<void>
  /** Writes `text` to `path`, fsynced. */
  putText(path: string, text: string): Promise<void>
  /** Renames over what is at `to` (posix-rename@openssh.com: atomic). */
  rename(from: string, to: string): Promise<void>
  /**
   * Renames only when nothing is at `to`, and fails otherwise (SFTP's own rename; OpenSSH's server links
   * the new name, then unlinks the old): of two at once, one wins.
   */
  renameNew(from: string, to: string): Promise<void>
  remove(path: string): Promise<void>
  /** The SHA-256 of the remote file, read back in full. */
  sha256(path: string): Promise<string>
  readText(path: string): Promise<string>
  /** Copies the remote file to a local path. */
  get(path: string, localPath: string): Promise<void>
  close(): void
}

export type OpenRemoteArchive = (remote: ArchiveRemote) => Promise<RemoteArchiveFiles>

/** The checksum file beside each shipped file: sha256sum's format, so `sha256sum -c` checks it on the host. */
function checksumLine(sha256: string, name: string): string {
  return `${sha256}  ${name}\n`
}

export function parseChecksumLine(text: string): string | undefined {
  return /^([0-9a-f]{64}) {2}\S+\n?$/.exec(text)?.[1]
}

/**
 * One file: `.part`, read back and compared, renamed into place, then its checksum. Returns its size,
 * or undefined when the local file went meanwhile (a prune removed it: nothing needs it any more).
 */
export async function shipFile(
  files: RemoteArchiveFiles,
  localPath: string,
  path: string,
  remote: ArchiveRemote,
): Promise<number | undefined> {
  const info = await stat(localPath).catch(() => undefined)
  if (!info) return undefined
  const sha256 = await fileSha256(localPath)
  await files.put(localPath, `${path}.part`)
  await placeShipped(files, path, sha256, remote)
  return info.size
}

/** Text held in memory as one shipped file, as shipFile ships a file: returns its size in bytes. */
export async function shipText(
  files: RemoteArchiveFiles,
  text: string,
  path: string,
  remote: ArchiveRemote,
): Promise<number> {
  await files.putText(`${path}.part`, text)
  await placeShipped(files, path, textSha256(text), remote)
  return Buffer.byteLength(text)
}

export function textSha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** The `.part` read back and compared, renamed into place, then its checksum beside it. */
async function placeShipped(
  files: RemoteArchiveFiles,
  path: string,
  sha256: string,
  remote: ArchiveRemote,
): Promise<void> {
  const readBack = await files.sha256(`${path}.part`)
  if (readBack !== sha256) {
    throw new FleetkitError(
      'ARCHIVE_REMOTE_FAILED',
      `${remote.url}/${path}: the copy read back has SHA-256 ${readBack.slice(0, 12)}…, the local file ${sha256.slice(0, 12)}…; it was not counted as shipped`,
      {
        actions: [`check the disk of ${remote.host}`, 'fleetkit db archive ship (sends it again)'],
        data: { url: remote.url, path },
      },
    )
  }
  await files.rename(`${path}.part`, path)
  const name = path.slice(path.lastIndexOf('/') + 1)
  await files.putText(`${path}.sha256.part`, checksumLine(sha256, name))
  await files.rename(`${path}.sha256.part`, `${path}.sha256`)
}
