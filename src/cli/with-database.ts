// The state database for one command: opened once (the embedded server started, with progress on
// a terminal), handed to the work, and closed whatever happens. The one owner of the pool: the
// lifecycle functions take it and never open or close one themselves. Loaded lazily by the base
// command's withState (operator-context.ts), so a command that needs no state never loads pg.
import type { StatePool } from '../store/transaction.js'

import { resolveStateDir } from '../config/state-dir.js'
import { openDatabase } from '../store/database.js'
import { requireEmbedded } from '../store/embedded/archive-dir.js'
import { stateDirOption } from './flags.js'

export interface StateOpening {
  /** --state-dir as given (undefined or empty: FLEETKIT_STATE_DIR, else the default). */
  stateDir: string | undefined
  progress: (message: string) => void
  /** `none`: connect without checking or migrating the schema (db backup and restore judge it themselves). */
  schema?: 'none'
  /**
   * `restarts`: the embedded server only (DATABASE_URL refused before anything opens), its idle
   * connections' end not reported: the work restarts it on purpose (db archive).
   */
  embedded?: 'restarts'
}

/** Runs `work` with the state's pool and the state directory it resolved; closes the pool after. */
export async function withDatabase<T>(
  opening: StateOpening,
  work: (pool: StatePool, stateDir: string) => Promise<T>,
): Promise<T> {
  if (opening.embedded) requireEmbedded(process.env)
  const stateDir = stateDirOption(opening.stateDir).stateDir ?? resolveStateDir(process.env)
  const database = await openDatabase({
    ...stateDirOption(opening.embedded ? stateDir : opening.stateDir),
    progress: opening.progress,
    ...(opening.schema ? { schema: opening.schema } : {}),
    ...(opening.embedded ? { databaseUrl: '', onIdleError: () => undefined } : {}),
  })
  try {
    return await work(database.pool, stateDir)
  } finally {
    await database.close()
  }
}
