// A separate process that opens fleetkit's database on the embedded server of a state
// directory and prints {pid, port, started, url, version} as JSON: for multi-process tests.
// Run: node --import tsx test/support/open-embedded.ts STATE_DIR [HOLD_MS]
import { openDatabase } from '../../src/store/database.js'

const [stateDir, holdMs] = process.argv.slice(2)
if (!stateDir) throw new Error('usage: open-embedded.ts STATE_DIR [HOLD_MS]')
const db = await openDatabase({ stateDir, databaseUrl: '' })
try {
  const version = await db.pool.query<{ v: number }>('SELECT max(version) AS v FROM schema_migrations')
  if (holdMs) await new Promise((resolve) => setTimeout(resolve, Number(holdMs)))
  process.stdout.write(
    `${JSON.stringify({ pid: db.embedded?.pid, port: db.embedded?.port, started: db.embedded?.started, url: db.url, version: version.rows[0]?.v })}\n`,
  )
} finally {
  await db.close()
}
