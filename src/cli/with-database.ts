// The state database for one command: opened once (the embedded server started, with progress on
// a terminal), handed to the work, and closed whatever happens. The one owner of the pool: the
// lifecycle functions take it and never open or close one themselves.
import type pg from 'pg'

import { openDatabase } from '../store/database.js'
import { stateDirOption } from './flags.js'

export async function withDatabase<T>(
  stateDir: string | undefined,
  progress: (message: string) => void,
  work: (pool: pg.Pool) => Promise<T>,
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
