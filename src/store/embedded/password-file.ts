// The embedded superuser's password: generated once into a 0600 file that every fleetkit
// process on the machine reads; whoever reads it is the database's superuser. In a group-shared
// state (`fleetkit gateway install`: its directory is setgid) it is 0640, for the group's members.
import { randomBytes } from 'node:crypto'
import { chmod, chown, link, readFile, stat, unlink, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'

/** The mode the password file may have at most: 0640 in a shared state, else 0600. */
async function allowedMode(path: string): Promise<{ mode: number; owner?: { uid: number; gid: number } }> {
  const dir = await stat(dirname(path)).catch(() => undefined)
  if (dir && (dir.mode & 0o2000) !== 0 && dir.uid !== 0) return { mode: 0o640, owner: { uid: dir.uid, gid: dir.gid } }
  return { mode: 0o600 }
}

/** The password file, tightened back to 0600 (0640 when shared) if a restore or a copy loosened it. */
export async function readPasswordFile(path: string): Promise<string> {
  const text = await readFile(path, 'utf8')
  const mode = (await stat(path)).mode & 0o777
  const allowed = (await allowedMode(path)).mode
  if ((mode & ~allowed) !== 0) await chmod(path, mode & allowed).catch(() => undefined)
  return text.trim()
}

/** The password is generated once; link() publishes it atomically so racing processes agree. */
export async function readOrCreatePassword(path: string): Promise<string> {
  const existing = await readPasswordFile(path).catch(() => undefined)
  if (existing) return existing
  const allowed = await allowedMode(path)
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`
  await writeFile(temp, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 })
  try {
    if (allowed.owner && process.getuid?.() === 0) await chown(temp, allowed.owner.uid, allowed.owner.gid)
    await chmod(temp, allowed.mode)
    await link(temp, path)
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error
  } finally {
    await unlink(temp).catch(() => undefined)
  }
  return (await readFile(path, 'utf8')).trim()
}
