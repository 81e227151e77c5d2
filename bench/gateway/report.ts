// How the gateway bench reports: a block of figures per fleet size on stdout, and, only when
// asked (--write-docs), the same figures appended as a table to docs/performance.md.
import { appendFile, readFile, writeFile } from 'node:fs/promises'
import { cpus } from 'node:os'

import { packagePath } from '../../src/package-root.js'
import type { ConnectResult, EnrollResult, SustainResult } from './agents.js'
import type { Options } from './options.js'

export interface Row {
  agents: number
  setupMs: number
  connect: ConnectResult
  sustain: SustainResult
  storm: ConnectResult
}

const ms = (value: number) => `${value.toFixed(value < 10 ? 1 : 0)} ms`

function reasonText(...maps: Map<string, number>[]): string {
  const total = new Map<string, number>()
  for (const map of maps) for (const [k, v] of map) total.set(k, (total.get(k) ?? 0) + v)
  return [...total]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${v} ${k}`)
    .join(', ')
}

export function printRow(row: Row, options: Options): void {
  const s = row.sustain
  process.stdout.write(
    [
      `agents ${row.agents}: setup ${(row.setupMs / 1000).toFixed(1)} s; first connect ${(row.connect.wallMs / 1000).toFixed(1)} s (p99 ${ms(row.connect.p99)}, ${row.connect.errors} errors)`,
      `  sustained (${options.intervalMs} ms per agent, ${s.seconds.toFixed(1)} s): ${s.perSecond.toFixed(0)} heartbeats/s, p50 ${ms(s.p50)}, p99 ${ms(s.p99)}, ${s.errors} errors`,
      `  database: ${s.xactCommitPerSecond.toFixed(1)} xact_commit/s, ${s.writeTransactionsPerSecond.toFixed(1)} write transactions/s`,
      `  reconnect storm: ${row.storm.count} handshakes in ${(row.storm.wallMs / 1000).toFixed(1)} s (p50 ${ms(row.storm.p50)}, p99 ${ms(row.storm.p99)}, ${row.storm.errors} errors)`,
      `  errors by reason: ${reasonText(row.connect.reasons, s.reasons, row.storm.reasons) || 'none'}`,
      '',
    ].join('\n'),
  )
}

/** `bareFullRate`: the bare server's full mTLS handshakes/s of the same run (the ratio bench), printed as a ratio. */
export function printEnrollments(enroll: EnrollResult, bareFullRate?: number): void {
  const ratio =
    bareFullRate === undefined || bareFullRate === 0
      ? ''
      : ` (${(enroll.perSecond / bareFullRate).toFixed(2)}x the bare server's ${bareFullRate.toFixed(0)} full handshakes/s)`
  process.stdout.write(
    `enrollments: ${enroll.count} in ${(enroll.count / enroll.perSecond).toFixed(1)} s = ${enroll.perSecond.toFixed(0)}/s${ratio}, p50 ${ms(enroll.p50)}, p99 ${ms(enroll.p99)}, refused ${enroll.refused}${enroll.refusedByStatus && enroll.refused > 0 ? ` ${JSON.stringify(enroll.refusedByStatus)}` : ''}\n`,
  )
}

export async function appendToDocs(
  rows: Row[],
  enroll: EnrollResult | undefined,
  skipped: string[],
  options: Options,
): Promise<void> {
  const path = packagePath('docs', 'performance.md')
  let existing: string
  try {
    existing = await readFile(path, 'utf8')
  } catch {
    existing =
      '# Performance\n\nFigures from the `bench/` scripts, each run on the CI machine kind (2 cores). None is a timed test.\n'
    await writeFile(path, existing)
  }
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU'
  const lines: string[] = []
  if (!/^## Gateway$/m.test(existing)) {
    lines.push(
      '',
      '## Gateway',
      '',
      '`npx tsx bench/gateway.ts [--agents 1000,10000]` starts a disposable PostgreSQL (fsync off), the gateway in its own',
      'process (default tuning except the enrollment rate limit, lifted to measure issuance), and N simulated agents in the',
      'bench process, each with its own certificate on a keep-alive mTLS connection. Every agent heartbeats once per',
      'interval (or as soon as its previous answer arrives, when the gateway is slower than that). Database figures are',
      '`pg_stat_database.xact_commit` deltas (every commit, reads included: certificate look-ups after the 1 s auth cache)',
      'and the transaction-ID counter delta (write transactions only). Gateway, PostgreSQL and the agents share the 2 cores.',
    )
  }
  lines.push(
    '',
    `Measured ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${cpus().length} x ${cpu}, ${options.intervalMs} ms heartbeat interval, ${options.seconds} s window`,
    '',
    '| agents | heartbeats/s | p50 | p99 | xact_commit/s | write tx/s | first connect (all at once) | reconnect storm: all re-handshake | errors |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.agents} | ${r.sustain.perSecond.toFixed(0)} | ${ms(r.sustain.p50)} | ${ms(r.sustain.p99)} | ${r.sustain.xactCommitPerSecond.toFixed(1)} | ${r.sustain.writeTransactionsPerSecond.toFixed(1)} | ${(r.connect.wallMs / 1000).toFixed(1)} s (p99 ${ms(r.connect.p99)}) | ${(r.storm.wallMs / 1000).toFixed(1)} s (p50 ${ms(r.storm.p50)}, p99 ${ms(r.storm.p99)}) | ${r.sustain.errors + r.connect.errors + r.storm.errors} |`,
    ),
  )
  for (const r of rows) {
    const reasons = reasonText(r.connect.reasons, r.sustain.reasons, r.storm.reasons)
    if (reasons) lines.push('', `Errors with ${r.agents} agents, by reason: ${reasons}.`)
  }
  if (enroll)
    lines.push(
      '',
      `Enrollments through \`POST /v1/enroll\` (32 concurrent clients): ${enroll.count} at ${enroll.perSecond.toFixed(0)}/s, p50 ${ms(enroll.p50)}, p99 ${ms(enroll.p99)}, ${enroll.refused} refused.`,
    )
  for (const line of skipped) lines.push('', `Not measured: ${line}.`)
  await appendFile(path, `${lines.join('\n')}\n`)
}
