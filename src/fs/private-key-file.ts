// The one reader of private key files (the agent's key, the CA and server keys): a key that
// group or others may read or write, a link, or another user's file is refused before any use.
import { constants } from 'node:fs'
import { open } from 'node:fs/promises'

/** Why a key file is refused; the caller turns it into its own coded error. */
export type KeyFileProblem =
  { kind: 'mode'; mode: string } | { kind: 'link' } | { kind: 'owner'; ownerUid: number; runningUid: number }

/**
 * Reads `path` through one handle (no window between the check and the read). `uid`, when
 * given, must own the file. O_NOFOLLOW: whoever can point a link elsewhere chooses the key.
 */
export async function readPrivateKeyFile(
  path: string,
  refuse: (problem: KeyFileProblem) => Error,
  uid?: number,
): Promise<string> {
  let handle
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw refuse({ kind: 'link' })
    throw error
  }
  try {
    const info = await handle.stat()
    if ((info.mode & 0o077) !== 0)
      throw refuse({ kind: 'mode', mode: (info.mode & 0o777).toString(8).padStart(4, '0') })
    if (uid !== undefined && info.uid !== uid) throw refuse({ kind: 'owner', ownerUid: info.uid, runningUid: uid })
    return await handle.readFile('utf8')
  } finally {
    await handle.close()
  }
}
