// Where fleetkit keeps its local state (the embedded PostgreSQL, the PKI by default):
// FLEETKIT_STATE_DIR, else the gateway service's shared /var/lib/fleetkit when this user may use it,
// else $XDG_STATE_HOME/fleetkit, else ~/.local/state/fleetkit (root: /var/lib/fleetkit).
import { accessSync, constants, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'

export type Env = Readonly<Record<string, string | undefined>>

/** The system state directory root uses: the embedded server runs as `postgres`, which cannot enter /root. */
const ROOT_STATE_DIR = '/var/lib/fleetkit'

/**
 * True when `dir` is a state directory `fleetkit gateway install` shared (setgid, owned by the
 * service account) and this process may write it: root, the account, or a member of its group.
 */
function sharedStateUsable(dir: string = ROOT_STATE_DIR): boolean {
  try {
    const info = statSync(dir)
    if ((info.mode & 0o2000) === 0 || info.uid === 0) return false
    accessSync(dir, constants.W_OK | constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** The state directory named by the environment; always an absolute path. Does not create it. */
export function resolveStateDir(
  env: Env = process.env,
  home: () => string = homedir,
  uid: number = process.getuid?.() ?? -1,
  shared: (dir: string) => boolean = sharedStateUsable,
): string {
  const explicit = env.FLEETKIT_STATE_DIR?.trim()
  if (explicit) return resolve(explicit)
  // One state for the gateway service and every operator of this machine (docs/gateway.md).
  if (shared(ROOT_STATE_DIR)) return ROOT_STATE_DIR
  const xdg = env.XDG_STATE_HOME?.trim()
  // The XDG spec says a relative XDG_STATE_HOME is invalid and must be ignored.
  if (xdg && isAbsolute(xdg)) return join(xdg, 'fleetkit')
  if (uid === 0) return ROOT_STATE_DIR
  return join(env.HOME?.trim() || home(), '.local', 'state', 'fleetkit')
}
