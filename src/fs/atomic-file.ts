// The one crash-safe file writer (agent identity, PKI files, seeds): a new temp file beside the
// target, fsynced, renamed over it, the directory fsynced. A reader sees the old file or the new one.
// Node built-ins only: the agent bundle carries this module.
import { constants } from 'node:fs'
import { link, open, rename, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

import { type Rng, systemRng } from '../config/rng.js'
import { withPath } from './write-all.js'

export interface NewFile {
  name: string
  content: string | Uint8Array
  mode: number
  /** Given to this owner before it is renamed into place (root writing into another account's directory). */
  owner?: { uid: number; gid: number }
}

/**
 * Creates `path` (never an existing file, never through a link: O_EXCL), writes `data` with
 * `mode` and fsyncs it. open()'s mode is filtered by the umask, hence the explicit chmod.
 * (FileHandle.writeFile writes every byte, looping on short writes.) A failure names `shown`
 * (the file the caller is writing, which a temp file stands in for): a FileHandle's errors name none.
 */
async function writeNewFile(
  path: string,
  data: string | Uint8Array,
  mode: number,
  owner?: { uid: number; gid: number },
  shown = path,
): Promise<void> {
  const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode)
  try {
    if (owner) await handle.chown(owner.uid, owner.gid)
    await handle.chmod(mode)
    await handle.writeFile(data)
    await handle.sync()
  } catch (error) {
    await handle.close()
    await unlink(path).catch(() => undefined)
    throw withPath(error, shown)
  }
  await handle.close().catch((error: unknown) => {
    throw withPath(error, shown)
  })
}

/** A hidden temp name beside `path`, random so concurrent writers and planted names never collide. */
export function tempPathFor(path: string, rng: Rng = systemRng): string {
  return join(dirname(path), `.${basename(path)}.${rng(6).toString('hex')}.tmp`)
}

async function removeIfPresent(path: string): Promise<void> {
  try {
    await unlink(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
}

/**
 * Writes `data` to `<path>.staged` (a leftover from a crash is removed first), fsynced; the caller
 * renames it with `commitStaged`. The fixed name lets a restart finish an interrupted pair.
 */
export async function writeStaged(path: string, data: string | Uint8Array, mode = 0o600): Promise<string> {
  const staged = `${path}.staged`
  await removeIfPresent(staged)
  await writeNewFile(staged, data, mode)
  return staged
}

export async function commitStaged(path: string): Promise<void> {
  await rename(`${path}.staged`, path)
}

export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY)
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Temp file (mode 0600 unless given), fsync, rename over `path`, directory fsync; the temp file never outlives a failure. */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  mode = 0o600,
  rng: Rng = systemRng,
): Promise<void> {
  await writeFilesAtomic(dirname(path), [{ name: basename(path), content: data, mode }], rng)
}

/**
 * Several files in one directory: every one is written to its temp file before any is renamed,
 * then they are renamed in the order given, so a failure while writing changes nothing.
 * `beforeRename` runs once all are written, before the first rename (a release removes the
 * signature the new files will no longer match).
 */
export async function writeFilesAtomic(
  dir: string,
  files: readonly NewFile[],
  rng: Rng = systemRng,
  beforeRename?: () => Promise<void>,
): Promise<void> {
  const temps: { temp: string; final: string }[] = []
  try {
    for (const file of files) {
      const final = join(dir, file.name)
      const temp = tempPathFor(final, rng)
      await writeNewFile(temp, file.content, file.mode, file.owner, final)
      temps.push({ temp, final })
    }
    await beforeRename?.()
    while (temps.length > 0) {
      const { temp, final } = temps[0]!
      await rename(temp, final)
      temps.shift()
    }
  } finally {
    for (const { temp } of temps) await unlink(temp).catch(() => undefined)
  }
  await syncDirectory(dir)
}

/**
 * Creates `path` with `data` and `mode`, durably, and never over anything already there (a file, a
 * link, a dangling link: EEXIST). For a file that must never be replaced, such as a signing key.
 * Written in place, not renamed: no rename can refuse to replace, and a link (the other way) fails
 * on the FAT sticks offline keys often live on. A failed write removes what it created.
 */
export async function createFileExclusive(path: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  await writeNewFile(path, data, mode)
  await syncDirectory(dirname(path))
}

/**
 * Publishes `path` once, whole: a temp file beside it (`mode`, fsynced) is linked to the name, which
 * fails when anything is there already, so of processes creating it together one wins and all read
 * the winner's; a crash leaves no file or a whole one. False when another's file was there. Not on
 * filesystems without hard links (FAT): for files in the state directory, such as the ticket keys.
 */
export async function createFileOnce(
  path: string,
  data: string | Uint8Array,
  mode = 0o600,
  owner?: { uid: number; gid: number },
  rng: Rng = systemRng,
): Promise<boolean> {
  const temp = tempPathFor(path, rng)
  await writeNewFile(temp, data, mode, owner, path)
  try {
    await link(temp, path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw withPath(error, path)
  } finally {
    await unlink(temp).catch(() => undefined)
  }
  await syncDirectory(dirname(path))
  return true
}

/** Removes a file and makes the removal durable; a file already gone is fine. */
export async function removeDurably(path: string): Promise<void> {
  try {
    await unlink(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    throw error
  }
  await syncDirectory(dirname(path))
}
