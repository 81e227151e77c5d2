// The state database for one command: opened (the embedded server started, with progress on a
// terminal), handed to the work, and closed whatever happens.
import type pg from 'pg'

import { stateDirOption } from './flags.js'

export async function withDatabase<T>(
  stateDir: string | undefined,
  progress: (message: string) => void,
  work: (pool: pg.Pool) => Promise<T>,
): Promise<T> {
  const { openDatabase } = await import('../store/database.js')
  const database = await openDatabase({ ...stateDirOption(stateDir), progress })
  try {
    return await work(database.pool)
  } finally {
    await database.close()
  }
}
