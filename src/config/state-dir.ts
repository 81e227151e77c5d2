// Where fleetkit keeps its local state (the embedded PostgreSQL, the PKI by default):
// FLEETKIT_STATE_DIR, else $XDG_STATE_HOME/fleetkit, else ~/.local/state/fleetkit.
import { homedir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'

export type Env = Readonly<Record<string, string | undefined>>

/** The state directory named by the environment; always an absolute path. Does not create it. */
export function resolveStateDir(env: Env = process.env, home: () => string = homedir): string {
  const explicit = env.FLEETKIT_STATE_DIR?.trim()
  if (explicit) return resolve(explicit)
  const xdg = env.XDG_STATE_HOME?.trim()
  // The XDG spec says a relative XDG_STATE_HOME is invalid and must be ignored.
  if (xdg && isAbsolute(xdg)) return join(xdg, 'fleetkit')
  return join(env.HOME?.trim() || home(), '.local', 'state', 'fleetkit')
}
