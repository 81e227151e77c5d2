// Writes a file that holds a secret: created 0600 beside its target and renamed over it,
// so no reader ever sees it partial or with looser permissions.
import { randomBytes } from 'node:crypto'
import { chmod, open, rename, rm, stat } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'

export async function writePrivateFile(path: string, data: Buffer | string): Promise<void> {
  await assertDirectoryNotShared(dirname(path))
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`)
  const handle = await open(temp, 'wx', 0o600)
  try {
    await handle.writeFile(data)
    await handle.chmod(0o600)
    await handle.sync()
  } catch (error) {
    await handle.close()
    await rm(temp, { force: true })
    throw error
  }
  await handle.close()
  try {
    await rename(temp, path)
  } catch (error) {
    await rm(temp, { force: true })
    throw error
  }
  await chmod(path, 0o600)
}

/**
 * In a directory anyone may write without the sticky bit, anyone may also rename the file
 * away and put their own in its place (a seed that gives them the host): refuse it.
 */
async function assertDirectoryNotShared(dir: string): Promise<void> {
  const mode = (await stat(dir)).mode
  if ((mode & 0o002) !== 0 && (mode & 0o1000) === 0) {
    const shown = (mode & 0o7777).toString(8).padStart(4, '0')
    throw new FleetkitError('USAGE_INVALID', `${dir} is writable by everyone without the sticky bit (mode ${shown}): another user could replace the file; refusing to write a secret there`, {
      actions: ['write it into a directory only you can write, for example --output ~/seeds/NODE.user-data'],
      data: { path: dir, mode: shown },
    })
  }
}
