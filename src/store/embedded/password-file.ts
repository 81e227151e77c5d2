// The embedded superuser's password: generated once into a 0600 file that every fleetkit
// process on the machine reads; whoever reads it is the database's superuser.
import { randomBytes } from 'node:crypto'
import { chmod, link, readFile, stat, unlink, writeFile } from 'node:fs/promises'

/** The password file, tightened back to 0600 if a restore or a copy loosened it. */
export async function readPasswordFile(path: string): Promise<string> {
  const text = await readFile(path, 'utf8')
  const mode = (await stat(path)).mode
  if ((mode & 0o077) !== 0) await chmod(path, 0o600).catch(() => undefined)
  return text.trim()
}

/** The password is generated once; link() publishes it atomically so racing processes agree. */
export async function readOrCreatePassword(path: string): Promise<string> {
  const existing = await readPasswordFile(path).catch(() => undefined)
  if (existing) return existing
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`
  await writeFile(temp, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 })
  try {
    await link(temp, path)
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error
  } finally {
    await unlink(temp).catch(() => undefined)
  }
  return (await readFile(path, 'utf8')).trim()
}
