// Starts the embedded state database ahead of a command's work, so its first start (initdb,
// start, migrations: tens of seconds) is shown as steps of its own and never hides in the work.
import type { Env } from '../config/state-dir.js'

/**
 * With no DATABASE_URL, opens the embedded database once (starting it, which outlives this
 * command) and closes the connection; the work then finds it running. A DATABASE_URL server
 * has no first start to show, so nothing is done for it.
 */
export async function prepareState(env: Env, progress: (message: string) => void): Promise<void> {
  if ((env.DATABASE_URL ?? '').trim() !== '') return
  const { openDatabase } = await import('../store/database.js')
  const database = await openDatabase({ env, progress })
  await database.close()
}
