// The state database for one command: opened once (the embedded server started, with progress on
// a terminal), handed to the work, and closed whatever happens. The one owner of the pool: the
// lifecycle functions take it and never open or close one themselves.
import type { StatePool } from '../store/transaction.js'

import { resolveStateDir } from '../config/state-dir.js'
import { openDatabase } from '../store/database.js'
import { requireEmbedded } from '../store/embedded/archive-dir.js'
import { stateDirOption } from './flags.js'

export async function withDatabase<T>(
  stateDir: string | undefined,
  progress: (message: string) => void,
  work: (pool: StatePool) => Promise<T>,
  /** `none`: connect without checking or migrating the schema (db backup and restore judge it themselves). */
  schema?: 'none',
  /** The embedded server only, its idle connections' end not reported: the work restarts it on purpose. */
  embedded?: 'restarts',
): Promise<T> {
  const database = await openDatabase({
    ...stateDirOption(stateDir),
    progress,
    ...(schema ? { schema } : {}),
    ...(embedded ? { databaseUrl: '', onIdleError: () => undefined } : {}),
  })
  try {
    return await work(database.pool)
  } finally {
    await database.close()
  }
}

/** What a command that restarts the embedded server (db archive) hands its work. */
export interface EmbeddedWork {
  pool: StatePool
  stateDir: string
  env: NodeJS.ProcessEnv
  now: () => Date
  progress: (message: string) => void
}

/**
 * The embedded server's pool for a command that restarts it (`db archive`): DATABASE_URL refused
 * before anything opens, the state directory resolved, the restarts' dropped idle connections quiet.
 */
export async function withRestartableEmbedded<T>(
  stateDirFlagValue: string | undefined,
  withProgress: <R>(work: (progress: (message: string) => void) => Promise<R>) => Promise<R>,
  work: (context: EmbeddedWork) => Promise<T>,
): Promise<T> {
  requireEmbedded(process.env)
  const stateDir = stateDirOption(stateDirFlagValue).stateDir ?? resolveStateDir(process.env)
  return withProgress((progress) =>
    withDatabase(
      stateDir,
      progress,
      (pool) => work({ pool, stateDir, env: process.env, now: () => new Date(), progress }),
      undefined,
      'restarts',
    ),
  )
}
