// Where fleetkit keeps its local state (the embedded PostgreSQL, the PKI by default):
// FLEETKIT_STATE_DIR, else $XDG_STATE_HOME/fleetkit, else ~/.local/state/fleetkit (root: /var/lib/fleetkit).
import { homedir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'

export type Env = Readonly<Record<string, string | undefined>>

/** The system state directory root uses: the embedded server runs as `postgres`, which cannot enter /root. */
const ROOT_STATE_DIR = '/var/lib/fleetkit'

/** The state directory named by the environment; always an absolute path. Does not create it. */
export function resolveStateDir(
  env: Env = process.env,
  home: () => string = homedir,
  uid: number = process.getuid?.() ?? -1,
): string {
  const explicit = env.FLEETKIT_STATE_DIR?.trim()
  if (explicit) return resolve(explicit)
  const xdg = env.XDG_STATE_HOME?.trim()
  // The XDG spec says a relative XDG_STATE_HOME is invalid and must be ignored.
  if (xdg && isAbsolute(xdg)) return join(xdg, 'fleetkit')
  if (uid === 0) return ROOT_STATE_DIR
  return join(env.HOME?.trim() || home(), '.local', 'state', 'fleetkit')
}
