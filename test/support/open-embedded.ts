// A separate process that opens fleetkit's database on the embedded server of a state
// directory and prints {pid, port, started, url, version} as JSON: for multi-process tests.
// Run: node --import tsx test/support/open-embedded.ts STATE_DIR [BARRIER_DIR COUNT]
// With a barrier it keeps the database open until COUNT processes have opened it (each leaves a
// file in BARRIER_DIR): they are provably open at once, without a fixed wait.
import { readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

import { openDatabase } from '../../src/store/database.js'
import { eventually } from './eventually.js'

const [stateDir, barrierDir, count] = process.argv.slice(2)
if (!stateDir) throw new Error('usage: open-embedded.ts STATE_DIR [BARRIER_DIR COUNT]')
const db = await openDatabase({ stateDir, databaseUrl: '' })
try {
  const version = await db.pool.query<{ v: number }>('SELECT max(version) AS v FROM schema_migrations')
  if (barrierDir) {
    await writeFile(join(barrierDir, `opened-${process.pid}`), '')
    await eventually(
      `${count} processes to have the database open`,
      async () => (await readdir(barrierDir)).filter((f) => f.startsWith('opened-')).length >= Number(count),
      { timeoutMs: 60_000, intervalMs: 20 },
    )
  }
  process.stdout.write(
    `${JSON.stringify({ pid: db.embedded?.pid, port: db.embedded?.port, started: db.embedded?.started, url: db.url, version: version.rows[0]?.v })}\n`,
  )
} finally {
  await db.close()
}
