// The gateway bench's driver: the gateway under test in a child process of its own (`--serve`),
// a throwaway PostgreSQL, the PKI, and the run over each fleet size within the time budget.
import 'reflect-metadata'

import { type ChildProcess, spawn } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { performance } from 'node:perf_hooks'

import pg from 'pg'

import { packagePath } from '../../src/package-root.js'
import {
  buildFleet,
  connectAll,
  type EnrollResult,
  enrollments,
  newClient,
  STATS_SETTLE_MS,
  sustain,
} from './agents.js'
import type { Options } from './options.js'
import { startBenchPostgres } from './postgres.js'
import { printEnrollments, printRow, type Row } from './report.js'
import { createBenchContext, createBenchPki } from './setup.js'

export interface BenchResults {
  rows: Row[]
  enroll: EnrollResult | undefined
  skipped: string[]
}

// The gateway under test runs in a child process (`--serve`), so it has a core of its own.

export async function serve(): Promise<void> {
  const { openDatabase } = await import('../../src/store/database.js')
  const { startGateway, DEFAULT_TUNING } = await import('../../src/gateway/gateway.js')
  const { loadPkiSet } = await import('../../src/pki/pki-set.js')
  const { silentLogger } = await import('../../src/log/logger.js')
  const { DEFAULT_LOAD_SHEDDER_TUNING } = await import('../../src/gateway/load/load-shedder.js')
  const db = await openDatabase({ databaseUrl: process.env.BENCH_DATABASE_URL })
  const lifted = { perSource: { burst: 100_000, perSecond: 100_000 }, global: { burst: 100_000, perSecond: 100_000 } }
  const pkiDir = process.env.BENCH_PKI_DIR!
  // BENCH_SWEEP=1: the sweeper runs as in `fleetkit gateway serve` (the scale-out bench measures its failover).
  const { runSweep } = await import('../../src/lifecycle/node/sweep.js')
  const { loadSweepThresholds } = await import('../../src/lifecycle/node/thresholds.js')
  // FLEETKIT_NODE_UNHEALTHY_AFTER / FLEETKIT_NODE_LOST_AFTER as a served gateway reads them.
  const thresholds = loadSweepThresholds(process.env)
  const sweep =
    process.env.BENCH_SWEEP === '1' ? { sweep: { run: (pool: pg.Pool) => runSweep(pool, thresholds), thresholds } } : {}
  const gateway = await startGateway({
    ...sweep,
    pool: db.pool,
    pki: await loadPkiSet(pkiDir, new Date()),
    // The TLS ticket keys are kept there, as in `fleetkit gateway`: sessions resume across a restart.
    pkiDir,
    enrollBind: { host: '127.0.0.1', port: 0 },
    // A restarted gateway (the storm bench) listens where its agents know it.
    agentBind: { host: '127.0.0.1', port: Number(process.env.BENCH_AGENT_PORT ?? 0) },
    agentCertLifetimeSeconds: 86400,
    logger: silentLogger,
    // BENCH_GATEWAY_TUNING=default: the gateway as shipped (the storm bench). Otherwise default tuning except the
    // enrollment limit and delay-based shedding: the bench measures capacity, not the limiter or the shedder (on a
    // shared machine the event-loop delay is mostly other processes' load).
    // Either way the agent listener's per-source cap is lifted: the bench's whole fleet comes from 127.0.0.1,
    // a real fleet from an address per host.
    ...(process.env.BENCH_GATEWAY_TUNING === 'default'
      ? { tuning: { agentConnections: { ...DEFAULT_TUNING.agentConnections, maxPerSource: 1_000_000 } } }
      : {
          tuning: {
            enrollRate: lifted,
            agentConnections: { ...DEFAULT_TUNING.agentConnections, maxPerSource: 1_000_000 },
            loadShedding: { ...DEFAULT_LOAD_SHEDDER_TUNING, delayThresholdsMs: [Infinity, Infinity, Infinity] },
          },
        }),
  })
  process.stdout.write(
    `${JSON.stringify({ ready: true, enroll: gateway.enrollAddress.port, agent: gateway.agentAddress.port })}\n`,
  )
  const stop = async () => {
    await gateway.close()
    await db.close()
    process.exit(0)
  }
  process.once('SIGTERM', () => void stop())
  // Never outlive the parent.
  process.stdin.on('end', () => void stop())
  process.stdin.resume()
}

export interface GatewayProcessOptions {
  /** The agent listener's port (default: any free one). */
  agentPort?: number
  /** Run the sweeper (the sweep lease) as a served gateway does. */
  sweep?: boolean
  /** The gateway's shipped tuning instead of the bench's (limiter lifted, no delay-based shedding). */
  defaultTuning?: boolean
}

export async function startGatewayProcess(
  databaseUrl: string,
  pkiDir: string,
  options: GatewayProcessOptions = {},
): Promise<{ child: ChildProcess; enrollUrl: string; agentUrl: string }> {
  // BENCH_GATEWAY_NODE_ARGS: extra node flags for the gateway process only (`--cpu-prof --cpu-prof-dir=DIR` to profile it).
  const nodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter((a) => a !== '')
  const child = spawn(
    process.execPath,
    [...nodeArgs, '--import', 'tsx', packagePath('bench', 'gateway.ts'), '--serve'],
    {
      env: {
        ...process.env,
        BENCH_DATABASE_URL: databaseUrl,
        BENCH_PKI_DIR: pkiDir,
        ...(options.agentPort === undefined ? {} : { BENCH_AGENT_PORT: String(options.agentPort) }),
        ...(options.defaultTuning ? { BENCH_GATEWAY_TUNING: 'default' } : {}),
        ...(options.sweep ? { BENCH_SWEEP: '1' } : {}),
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  )
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the gateway did not start within 60 s')), 60_000)
    child.once('exit', (code) => reject(new Error(`the gateway exited with ${code}`)))
    // BENCH_GATEWAY_STDOUT=FILE: the gateway's stdout appended there (what --trace-deopt and the like print; each
    // gateway of a --restarts run after the one before).
    const kept = process.env.BENCH_GATEWAY_STDOUT
      ? createWriteStream(process.env.BENCH_GATEWAY_STDOUT, { flags: 'a' })
      : undefined
    createInterface({ input: child.stdout! }).on('line', (line) => {
      kept?.write(`${line}\n`)
      // Diagnostic node flags (--trace-deopt, --log-deopt) print to stdout too: only the JSON ready line counts.
      let ready: { ready?: boolean; enroll: number; agent: number }
      try {
        ready = JSON.parse(line) as typeof ready
      } catch {
        return
      }
      if (!ready?.ready) return
      clearTimeout(timer)
      child.removeAllListeners('exit')
      resolve({ child, enrollUrl: `https://127.0.0.1:${ready.enroll}`, agentUrl: `https://127.0.0.1:${ready.agent}` })
    })
  })
}

/** Runs every fleet size of `options` and the enrollments, printing each as it completes. */
export async function runBench(options: Options): Promise<BenchResults> {
  const benchStarted = performance.now()
  const overBudget = () => (performance.now() - benchStarted) / 1000 > options.budgetSeconds
  const hardStop = setTimeout(
    () => {
      process.stderr.write(`bench: over the hard limit of ${options.budgetSeconds + 300} s, stopping\n`)
      process.exit(3)
    },
    (options.budgetSeconds + 300) * 1000,
  )
  hardStop.unref()

  const dir = await mkdtemp(join(tmpdir(), 'fleetkit-bench-gw-'))
  const db = await startBenchPostgres()
  let gateway: ChildProcess | undefined
  const admin = new pg.Client({ connectionString: db.adminUrl })
  const rows: Row[] = []
  const skipped: string[] = []
  let enroll: EnrollResult | undefined
  try {
    await admin.connect()
    const { pkiDir, pki } = await createBenchPki(dir)
    const started = await startGatewayProcess(db.url, pkiDir)
    gateway = started.child
    const ctx = await createBenchContext(db, admin, pki, started)
    await writeFile(join(dir, 'ca.pem'), ctx.caPem)

    let lastPerAgentMs = 0
    for (const count of options.agents) {
      const remaining = options.budgetSeconds - (performance.now() - benchStarted) / 1000
      const estimate = (lastPerAgentMs * count) / 1000 + options.seconds + (2 * STATS_SETTLE_MS) / 1000 + 30
      if (overBudget() || (lastPerAgentMs > 0 && estimate > remaining)) {
        skipped.push(
          `${count} agents skipped: an estimated ${Math.round(estimate)} s against ${Math.round(remaining)} s of budget left`,
        )
        process.stderr.write(`bench: ${skipped.at(-1)}\n`)
        continue
      }
      process.stderr.write(`bench: ${count} agents: enrolling through the store and PKI\n`)
      const fleet = await buildFleet(count, `bench-${count}`, ctx)
      process.stderr.write(`bench: ${count} agents: set up in ${Math.round(fleet.setupMs)} ms; connecting\n`)
      const connect = await connectAll(ctx, fleet.agents)
      process.stderr.write(`bench: ${count} agents: sustained heartbeats for ${options.seconds} s\n`)
      const sustained = await sustain(ctx, fleet.agents, options.seconds, options.intervalMs)
      process.stderr.write(`bench: ${count} agents: reconnect storm\n`)
      for (const a of fleet.agents) {
        a.agent.destroy()
        a.agent = newClient(ctx, a.certificatePem)
      }
      const storm = await connectAll(ctx, fleet.agents)
      for (const a of fleet.agents) a.agent.destroy()
      rows.push({ agents: count, setupMs: fleet.setupMs, connect, sustain: sustained, storm })
      printRow(rows.at(-1)!, options)
      lastPerAgentMs = (fleet.setupMs + connect.wallMs + storm.wallMs) / count
    }
    if (options.enrollments > 0 && !overBudget()) {
      process.stderr.write(`bench: ${options.enrollments} enrollments through POST /v1/enroll\n`)
      enroll = await enrollments(ctx, options.enrollments)
      printEnrollments(enroll)
    }
  } finally {
    if (gateway && gateway.exitCode === null) {
      const exited = new Promise((resolve) => gateway!.once('exit', resolve))
      gateway.kill('SIGTERM')
      await exited
    }
    await admin.end().catch(() => {})
    await db.stop()
    await rm(dir, { recursive: true, force: true })
  }
  clearTimeout(hardStop)
  return { rows, enroll, skipped }
}
