// Scale-out (issue 24, item 4): 3 gateway processes on one PostgreSQL, the sweeper (its lease) running on
// each as `fleetkit gateway serve` runs it, and N simulated agents that each heartbeat every
// --heartbeat-seconds through the gateway their node ID picks, moving to the next on failure exactly as the
// agent does (src/agent/gateway-choice.ts). Mid-run the gateway holding the sweep lease is killed
// (SIGKILL: no release, no goodbye). Printed: heartbeat success, latency p50/p99, the database's write
// transactions per gateway per second (before and after the kill), how long until every agent of the dead
// gateway heartbeats again, and how long until another gateway holds the sweep lease.
//
//   npx tsx bench/scale-out.ts [--agents 5000] [--workers N] [--heartbeat-seconds 60] [--ramp-seconds R] [--seconds S]
//
// Loopback only, bounded in time, stops by itself. The agents run in --workers processes of their own
// (default: one per 12,000 agents, at least 2): each holds a connection per agent, under this machine's
// open-file limit. docs/scale-out.md records a run and where this machine stops.
import 'reflect-metadata'

import type { ChildProcess } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'

import { startIndex } from '../src/agent/gateway-choice.js'
import { countNodesByStatus } from '../src/store/nodes/nodes.js'
import { readSweepLease } from '../src/store/nodes/sweep-leader.js'
import { buildFleet } from './gateway/agents.js'
import { ask, type Child, startChild } from './gateway/child.js'
import { startGatewayProcess } from './gateway/driver.js'
import { flag, loadText } from './gateway/flags.js'
import type { ScaleAgentsResult } from './gateway/scale-result.js'
import { createBenchContext, createBenchPki, withBenchRun } from './gateway/setup.js'

const GATEWAYS = 3
const agentCount = flag('agents', 5000, GATEWAYS, 100_000)
const workers = flag('workers', Math.max(2, Math.ceil(agentCount / 12_000)), 1, 16)
const heartbeatSeconds = flag('heartbeat-seconds', 60, 5, 600)
// Agents come up over the ramp: on 2 cores shared by both sides about 40 full mTLS handshakes a
// second get through (docs/performance.md); a fleet does not boot in one minute either.
const rampSeconds = flag('ramp-seconds', Math.max(heartbeatSeconds, Math.ceil(agentCount / 40)), 1, 7200)
const seconds = flag('seconds', rampSeconds + heartbeatSeconds * 4, rampSeconds + heartbeatSeconds * 3, 10_800)
const say = (line: string) => process.stderr.write(`bench: ${line}\n`)
const hardStop = setTimeout(
  () => {
    say('over the hard limit, stopping')
    process.exit(3)
  },
  (seconds + agentCount / 20 + 600) * 1000,
)
hardStop.unref()

/** The server's transaction-ID counter: it advances once per write transaction, of every client. */
async function writeTransactions(admin: { query: (sql: string) => Promise<{ rows: { xid: string }[] }> }) {
  return Number((await admin.query('SELECT txid_current()::text AS xid')).rows[0]!.xid)
}

function percentile(buckets: Map<number, number>, total: number, p: number): number {
  let seen = 0
  for (const ms of [...buckets.keys()].sort((a, b) => a - b)) {
    seen += buckets.get(ms)!
    if (seen >= (p / 100) * total) return ms
  }
  return Number.NaN
}

await withBenchRun('fleetkit-bench-scale-', async (run) => {
  const { pkiDir, pki } = await createBenchPki(run.dir)
  say(`starting ${GATEWAYS} gateways (each with its sweeper) on one PostgreSQL`)
  const gateways: { child: ChildProcess; agentUrl: string; enrollUrl: string }[] = []
  // Nodes are declared before their agents start over the ramp: silence thresholds past the ramp, or
  // the sweep would mark them before their first heartbeat (what the bench measures is the gateways).
  process.env.FLEETKIT_NODE_UNHEALTHY_AFTER = String(rampSeconds + heartbeatSeconds * 3)
  process.env.FLEETKIT_NODE_LOST_AFTER = String(rampSeconds + heartbeatSeconds * 6)
  for (let i = 0; i < GATEWAYS; i++) {
    const started = await startGatewayProcess(run.db.url, pkiDir, { sweep: true })
    run.children.add(started.child)
    gateways.push(started)
  }
  const urls = gateways.map((g) => g.agentUrl)
  const ctx = await createBenchContext(run.db, run.admin, pki, gateways[0]!)
  say(`enrolling ${agentCount} agents through the store and the PKI`)
  const fleet = await buildFleet(agentCount, 'scale', ctx)
  for (const a of fleet.agents) a.agent.destroy()
  const files: string[] = []
  for (let w = 0; w < workers; w++) {
    const slice = fleet.agents.filter((_, i) => i % workers === w)
    const file = join(run.dir, `agents-${w}.json`)
    await writeFile(
      file,
      JSON.stringify({
        urls,
        caPem: ctx.caPem,
        keyPem: ctx.keyPem,
        agents: slice.map((a) => ({ nodeId: a.nodeId, certificatePem: a.certificatePem })),
        heartbeatMs: heartbeatSeconds * 1000,
        rampMs: rampSeconds * 1000,
      }),
    )
    files.push(file)
  }
  const agents: Child[] = await Promise.all(
    files.map((file) => startChild('scale-agents.ts', { BENCH_SCALE_FILE: file })),
  )
  for (const a of agents) run.children.add(a.child)

  const epoch = Date.now()
  say(
    `running ${agentCount} agents for ${seconds} s, a heartbeat every ${heartbeatSeconds} s each, the first within ${rampSeconds} s`,
  )
  const results = Promise.all(agents.map((a) => ask<ScaleAgentsResult>(a, `run ${seconds} ${epoch}`)))

  // Steady state: every agent has connected once (the ramp and a little); the write rate over one heartbeat interval.
  await sleep((rampSeconds + heartbeatSeconds * 0.2) * 1000)
  const xidBefore = await writeTransactions(run.admin)
  const windowStarted = performance.now()
  await sleep(heartbeatSeconds * 1000)
  const steadyWrites = (await writeTransactions(run.admin)) - xidBefore
  const steadySeconds = (performance.now() - windowStarted) / 1000

  const lease = await readSweepLease(run.db.pool)
  const leaderPid = Number(lease?.holder.split(':').at(-2))
  const killed = gateways.findIndex((g) => g.child.pid === leaderPid)
  if (killed < 0) throw new Error(`no gateway holds the sweep lease (${JSON.stringify(lease)})`)
  const killedAt = Date.now() - epoch
  say(`killing gateway ${killed + 1} (PID ${leaderPid}, the sweep leader) at ${(killedAt / 1000).toFixed(1)} s`)
  gateways[killed]!.child.kill('SIGKILL')
  const killedMs = performance.now()
  let sweepFailoverMs = Number.NaN
  for (;;) {
    const now = await readSweepLease(run.db.pool)
    if (now && now.holder !== lease!.holder) {
      sweepFailoverMs = performance.now() - killedMs
      break
    }
    if (performance.now() - killedMs > 120_000) break
    await sleep(100)
  }
  const xidAfterKill = await writeTransactions(run.admin)
  const afterKillStarted = performance.now()
  await sleep(Math.min(heartbeatSeconds * 1000, Math.max(0, epoch + seconds * 1000 - Date.now() - 2000)))
  const survivorWrites = (await writeTransactions(run.admin)) - xidAfterKill
  const survivorSeconds = (performance.now() - afterKillStarted) / 1000

  const answers = await results
  const buckets = new Map<number, number>()
  const failures: Record<string, number> = {}
  let attempts = 0
  let ok = 0
  const firstOk = new Map<string, number>()
  for (const r of answers) {
    attempts += r.attempts
    ok += r.ok
    for (const [ms, n] of r.latencyBuckets) buckets.set(ms, (buckets.get(ms) ?? 0) + n)
    for (const [reason, n] of Object.entries(r.failures)) failures[reason] = (failures[reason] ?? 0) + n
    for (const f of r.firstOkAfterMove) if (f.at >= killedAt && !firstOk.has(f.nodeId)) firstOk.set(f.nodeId, f.at)
  }
  const orphans = fleet.agents.filter((a) => startIndex(a.nodeId, GATEWAYS) === killed).map((a) => a.nodeId)
  const backAfter = orphans.map((id) => firstOk.get(id)).filter((at): at is number => at !== undefined)
  backAfter.sort((a, b) => a - b)
  const health = Object.entries(await countNodesByStatus(run.db.pool)).filter(([, n]) => n > 0)

  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`
  console.log(
    `\nScale-out: ${GATEWAYS} gateways on one PostgreSQL, ${agentCount} agents, a heartbeat every ${heartbeatSeconds} s`,
  )
  console.log(`load average (1/5/15 min) at the end: ${loadText()}`)
  console.log('| figure | value |')
  console.log('| --- | --- |')
  console.log(`| heartbeats answered 200 | ${ok} of ${attempts} (${((100 * ok) / attempts).toFixed(2)}%) |`)
  console.log(
    `| failed attempts by reason | ${
      Object.entries(failures)
        .map(([r, n]) => `${r} ${n}`)
        .join(', ') || 'none'
    } |`,
  )
  console.log(`| heartbeat latency p50 / p99 | ${percentile(buckets, ok, 50)} ms / ${percentile(buckets, ok, 99)} ms |`)
  console.log(
    `| write transactions per gateway per second, ${GATEWAYS} gateways (steady) | ${(steadyWrites / steadySeconds / GATEWAYS).toFixed(2)} (${steadyWrites} in ${steadySeconds.toFixed(0)} s) |`,
  )
  console.log(
    `| write transactions per gateway per second, ${GATEWAYS - 1} gateways (after the kill) | ${(survivorWrites / survivorSeconds / (GATEWAYS - 1)).toFixed(2)} (${survivorWrites} in ${survivorSeconds.toFixed(0)} s) |`,
  )
  console.log(
    `| agents of the killed gateway back (a 200 through another) | ${backAfter.length} of ${orphans.length}${backAfter.length > 0 ? `; all of them ${s(backAfter.at(-1)! - killedAt)} after the kill, half ${s(backAfter[Math.floor(backAfter.length / 2)]! - killedAt)}` : ''} |`,
  )
  console.log(
    `| sweep lease taken over after the kill | ${Number.isNaN(sweepFailoverMs) ? 'not within 120 s' : s(sweepFailoverMs)} |`,
  )
  console.log(`| nodes by status at the end | ${health.map(([status, n]) => `${status} ${n}`).join(', ')} |`)
})
clearTimeout(hardStop)
