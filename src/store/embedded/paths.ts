// Where everything of the embedded PostgreSQL lives: <stateDir>/postgres and the names of
// the superuser, database and address fleetkit uses on it.
import { join } from 'node:path'

export const EMBEDDED_USER = 'fleetkit'
export const EMBEDDED_DATABASE = 'fleetkit'
export const EMBEDDED_HOST = '127.0.0.1'

export interface EmbeddedServerPaths {
  stateDir: string
  /** `<stateDir>/postgres`: everything of the embedded server. */
  root: string
  /** The PostgreSQL data directory (owned by `postgres` when fleetkit runs as root). */
  dataDir: string
  /** The generated password of the `fleetkit` superuser; 0600, never printed. */
  passwordFile: string
  /** `{pid, port, ...}` of the running server, written by the process that started it. */
  serverFile: string
  lockFile: string
  logFile: string
  tmpDir: string
}

export function embeddedServerPaths(stateDir: string): EmbeddedServerPaths {
  const root = join(stateDir, 'postgres')
  return {
    stateDir,
    root,
    dataDir: join(root, 'data'),
    passwordFile: join(root, 'password'),
    serverFile: join(root, 'server.json'),
    lockFile: join(root, 'start.lock'),
    logFile: join(root, 'server.log'),
    tmpDir: join(root, 'tmp'),
  }
}
