// `mkdir -p -m MODE` as coreutils does it: the missing parents with the default mode (the umask's), the
// directory itself with MODE. Node's `mkdir(path, { recursive: true, mode })` differs twice: it gives every
// parent it makes MODE (a state directory asked for at /srv/fleetkit/state made /srv/fleetkit 0700, which the
// `postgres` user then could not pass), and it retries forever where a directory exists but refuses a new
// entry with ENOENT (`/proc/1/state`: the command hung).
import { mkdir, stat } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'

/**
 * The parents of a directory inside the state directory (pki/, seeds/, sync/, postgres/), the state directory
 * itself among them when a command such as `ca init` makes it first: nobody else lists them, and the `postgres`
 * user can still pass them to its data directory, as the embedded server's start leaves the state directory.
 */
export const STATE_PARENT_MODE = 0o711

/**
 * Makes `path` (mode `mode`, else the default) and whatever parents it lacks (`parentMode`, else the default);
 * an existing directory is kept as it is.
 */
export async function makeDirectories(path: string, mode?: number, parentMode?: number): Promise<void> {
  const target = resolve(path)
  const missing: string[] = []
  for (let dir = target; ; dir = dirname(dir)) {
    const found = await directoryAt(dir)
    if (found) break
    missing.push(dir)
    if (dirname(dir) === dir) break
  }
  for (const dir of missing.reverse()) {
    try {
      const made = dir === target ? mode : parentMode
      await mkdir(dir, made === undefined ? {} : { mode: made })
    } catch (error) {
      // Made by someone else meanwhile: as good as made here. Anything else (ENOENT in /proc included) is final.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && (await directoryAt(dir))) continue
      throw error
    }
  }
}

/** True for a directory, false when nothing is there; a file in the way is EEXIST, as mkdir says it. */
async function directoryAt(dir: string): Promise<boolean> {
  try {
    if ((await stat(dir)).isDirectory()) return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
  throw Object.assign(new Error(`EEXIST: file already exists, mkdir '${dir}'`), {
    code: 'EEXIST',
    syscall: 'mkdir',
    path: dir,
  })
}
