// Writes a file that holds a secret: created 0600 beside its target and renamed over it, so no reader
// ever sees it partial or with looser permissions; or, for one never replaced, created 0600 in place.
import { stat } from 'node:fs/promises'
import { dirname } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { createFileExclusive, type NewFile, writeFileAtomic, writeFilesAtomic } from './atomic-file.js'

export async function writePrivateFile(path: string, data: Buffer | string): Promise<void> {
  await assertDirectoryNotShared(dirname(path))
  await writeFileAtomic(path, data, 0o600)
}

/**
 * Files that belong together (a key and its certificates), written as writeFilesAtomic writes them:
 * all or, when one cannot be written, none. The directory is refused as writePrivateFile refuses it.
 */
export async function writePrivateFiles(dir: string, files: readonly NewFile[]): Promise<void> {
  await assertDirectoryNotShared(dir)
  await writeFilesAtomic(dir, files)
}

/** writePrivateFile for a file that is never replaced: EEXIST when anything is at `path` already. */
export async function createPrivateFile(path: string, data: Buffer | string): Promise<void> {
  await assertDirectoryNotShared(dirname(path))
  await createFileExclusive(path, data, 0o600)
}

/**
 * In a directory anyone may write without the sticky bit, anyone may also rename the file
 * away and put their own in its place (a seed that gives them the host): refuse it.
 */
async function assertDirectoryNotShared(dir: string): Promise<void> {
  const mode = (await stat(dir)).mode
  if ((mode & 0o002) !== 0 && (mode & 0o1000) === 0) {
    const shown = (mode & 0o7777).toString(8).padStart(4, '0')
    throw new FleetkitError(
      'USAGE_INVALID',
      `${dir} is writable by everyone without the sticky bit (mode ${shown}): another user could replace the file; refusing to write a secret there`,
      {
        actions: ['write it into a directory only you can write, for example --output ~/seeds/NODE.user-data'],
        data: { path: dir, mode: shown },
      },
    )
  }
}
