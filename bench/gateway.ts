// Gateway benchmark: N simulated agents on keep-alive mTLS connections heartbeating against a
// real gateway (its own process) and a real PostgreSQL on this machine; enrollments and a reconnect storm.
//
//   npx tsx bench/gateway.ts [--agents 1000,10000] [--seconds 20] [--interval-ms 1000] [--enrollments 1000]
//                            [--budget-seconds 600] [--write-docs]
//
// Loopback only, bounded in agents and time, stops by itself. Agents are enrolled directly
// through the store and the PKI (one shared key, a certificate each) to save time; the
// enrollment figure goes through POST /v1/enroll. The figures are printed; --write-docs also
// appends them to docs/performance.md. Parts: gateway/driver.ts (processes and the run),
// gateway/agents.ts (the simulated agents and their loads), gateway/report.ts (printing).
import { runBench, serve } from './gateway/driver.js'
import { parseOptions } from './gateway/options.js'
import { appendToDocs } from './gateway/report.js'

if (process.argv.includes('--serve')) {
  await serve()
} else {
  const options = parseOptions(process.argv.slice(2))
  const { rows, enroll, skipped } = await runBench(options)
  if (options.writeDocs && rows.length > 0) await appendToDocs(rows, enroll, skipped, options)
}
