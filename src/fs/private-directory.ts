// The one refusal of a key directory that group or others may write (the agent's PKI directory,
// the gateway's): whoever can write it can swap a key, plant a link or append a CA to the bundle.
import { stat } from 'node:fs/promises'

/**
 * Resolves when only the owner may write `dir`, or when it does not exist (its creator makes it
 * 0700). Otherwise throws what `refuse` makes of its mode (four octal digits): the code and the
 * advice differ per caller, the check does not.
 */
export async function assertPrivateDirectory(dir: string, refuse: (mode: string) => Error): Promise<void> {
  let mode: number
  try {
    mode = (await stat(dir)).mode
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    throw error
  }
  if ((mode & 0o022) !== 0) throw refuse((mode & 0o777).toString(8).padStart(4, '0'))
}
