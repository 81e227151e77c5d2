// Crash-safe file staging: write a temp file beside the target, fsync it, rename it
// over the target, fsync the directory. A reader sees the old file or the new one, never half.
import { open, rename, unlink } from 'node:fs/promises'
import { dirname } from 'node:path'

/** Writes `data` to `<path>.staged` with `mode`, fsynced; the caller renames it with `commitStaged`. */
export async function writeStaged(path: string, data: string | Uint8Array, mode = 0o600): Promise<string> {
  const staged = `${path}.staged`
  const handle = await open(staged, 'w', mode)
  try {
    // open()'s mode applies only to a new file: a leftover temp file keeps its old mode otherwise.
    await handle.chmod(mode)
    await handle.writeFile(data)
    await handle.sync()
  } finally {
    await handle.close()
  }
  return staged
}

export async function commitStaged(path: string): Promise<void> {
  await rename(`${path}.staged`, path)
}

export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Temp file, fsync, rename, 0600 (or `mode`), directory fsync. */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  await writeStaged(path, data, mode)
  await commitStaged(path)
  await syncDirectory(dirname(path))
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
