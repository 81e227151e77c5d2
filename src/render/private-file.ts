// Writes a file that holds a secret: created 0600 beside its target and renamed over it,
// so no reader ever sees it partial or with looser permissions.
import { randomBytes } from 'node:crypto'
import { chmod, open, rename, rm } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

export async function writePrivateFile(path: string, data: Buffer | string): Promise<void> {
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
