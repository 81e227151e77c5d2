// A reconnect storm (issue 12, item 7): N agents with kept-alive connections and a TLS session each, the
// server killed and started again on the same port, and every agent heartbeating at the same moment,
// retrying as the agent does. Run against a bare node:https mTLS server and against the gateway as
// shipped (default tuning: shedding on), in the same run. Both servers' resumed-handshake rate is measured
// before the storms and again after them; the bare server's mean sets the target: every agent back within
// 1.5 x N / that rate, and no agent with an error it cannot recover from.
//
//   npx tsx bench/gateway-storm.ts [--agents 10000] [--workers 2] [--resumed-seconds 6] [--deadline-seconds 120] [--heartbeat-seconds 15]
//
// The agents run in --workers processes of their own (bench/gateway/storm-agents.ts) with the agent's
// own mTLS client and retry rules. Loopback only, bounded in time, stops by itself.
import 'reflect-metadata'

import type { ChildProcess } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

import { buildFleet } from './gateway/agents.js'
import { ask, type Child, startChild, stopChild } from './gateway/child.js'
import { startGatewayProcess } from './gateway/driver.js'
import { flag, loadText } from './gateway/flags.js'
import { processCpuMicros, processTreeCpuMicros } from './gateway/process-cpu.js'
import { measure } from './gateway/ratio-measure.js'
import { createBenchContext, createBenchPki, withBenchRun } from './gateway/setup.js'
import type { StormResult } from './gateway/storm-result.js'

const agentCount = flag('agents', 10_000)
const workers = flag('workers', 2, 1, 16)
const resumedSeconds = flag('resumed-seconds', 6)
const deadlineSeconds = flag('deadline-seconds', 120, 10, 600)
const heartbeatSeconds = flag('heartbeat-seconds', 15)
const hardStop = setTimeout(
  () => {
    process.stderr.write('bench: over the hard limit, stopping\n')
    process.exit(3)
  },
  (deadlineSeconds * 2 + agentCount / 20 + 600) * 1000,
)
hardStop.unref()
const say = (line: string) => process.stderr.write(`bench: ${line}\n`)

/** CPU time spent during the storm, in microseconds: the server's, PostgreSQL's (postmaster and backends), the agents'. */
interface StormCpu {
  server: number | undefined
  postgres: number | undefined
  agents: number
}

/** A server the storm can kill and start again where its agents know it. */
interface Target {
  name: string
  start: (port: number) => Promise<{ child: ChildProcess; port: number }>
}

/** The storm against one server: prime every agent, kill the server, start it again, storm, add up the workers' answers. */
async function stormOn(
  target: Target,
  files: string[],
  running: { child: ChildProcess; port: number },
  postgresPid: number | undefined,
): Promise<{ result: StormResult; cpu: StormCpu; server: ChildProcess }> {
  const agents: Child[] = await Promise.all(
    files.map((file) => startChild('storm-agents.ts', { BENCH_STORM_FILE: file })),
  )
  try {
    say(`${target.name}: priming ${agentCount} agents (a kept-alive connection and a TLS session each)`)
    const primed = await Promise.all(agents.map((a) => ask<{ ok: number; failed: number }>(a, 'prime')))
    const failed = primed.reduce((n, p) => n + p.failed, 0)
    if (failed > 0) throw new Error(`${target.name}: ${failed} agents failed their first heartbeat`)
    say(`${target.name}: killing the server and starting it again on port ${running.port}`)
    await stopChild(running.child, 'SIGKILL')
    const server = (await target.start(running.port)).child
    // Counted from the server's ready line: what it does in the background once listening (the gateway
    // reads its authentication cache) weighs on the storm's CPU, though the pause below gives it a head start.
    const before = { server: processCpuMicros(server.pid), postgres: processTreeCpuMicros(postgresPid) }
    // The agents' clients see their kept connections closed before the storm starts, as after a real restart.
    await sleep(1000)
    say(`${target.name}: storm`)
    const answers = await Promise.all(agents.map((a) => ask<StormResult>(a, 'storm')))
    const since = (now: number | undefined, then: number | undefined) =>
      now === undefined || then === undefined ? undefined : now - then
    const cpu = {
      server: since(processCpuMicros(server.pid), before.server),
      postgres: since(processTreeCpuMicros(postgresPid), before.postgres),
      agents: answers.reduce((n, a) => n + a.cpuMicros, 0),
    }
    const failures: Record<string, number> = {}
    for (const a of answers) for (const [k, v] of Object.entries(a.failures)) failures[k] = (failures[k] ?? 0) + v
    const sum = (key: 'agents' | 'back' | 'resumed' | 'attempts' | 'unrecoverable') =>
      answers.reduce((n, a) => n + a[key], 0)
    const worst = (key: 'lastBackMs' | 'p50Ms' | 'p99Ms') => Math.max(...answers.map((a) => a[key]))
    return {
      server,
      cpu,
      result: {
        agents: sum('agents'),
        back: sum('back'),
        lastBackMs: worst('lastBackMs'),
        p50Ms: worst('p50Ms'),
        p99Ms: worst('p99Ms'),
        resumed: sum('resumed'),
        attempts: sum('attempts'),
        failures,
        unrecoverable: sum('unrecoverable'),
        cpuMicros: cpu.agents,
      },
    }
  } finally {
    for (const a of agents) await stopChild(a.child)
  }
}

await withBenchRun('fleetkit-bench-storm-', async ({ dir, db, admin, children }) => {
  const { pkiDir, pki } = await createBenchPki(dir)
  const startGateway = async (port: number) => {
    const g = await startGatewayProcess(db.url, pkiDir, { agentPort: port, defaultTuning: true })
    children.add(g.child)
    return { child: g.child, port: Number(new URL(g.agentUrl).port), enrollUrl: g.enrollUrl, agentUrl: g.agentUrl }
  }
  const startBare = async (port: number) => {
    // BENCH_BARE_NODE_ARGS: extra node flags for the bare server (`--cpu-prof --cpu-prof-dir=DIR`), as for the gateway.
    const b = await startChild(
      'bare-server.ts',
      { BENCH_PKI_DIR: pkiDir, BENCH_PORT: String(port) },
      (process.env.BENCH_BARE_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''),
    )
    children.add(b.child)
    return { child: b.child, port: b.first.port as number }
  }
  const gateway = await startGateway(0)
  const bare = await startBare(0)
  const ctx = await createBenchContext(db, admin, pki, gateway)
  say(`issuing ${agentCount} agent certificates`)
  const fleet = await buildFleet(agentCount, 'storm', ctx)
  for (const a of fleet.agents) a.agent.destroy()
  const certificates = fleet.agents.map((a) => a.certificatePem)

  // Measured before the storms and again after them, on the restarted servers: the machine's speed drifts
  // over the minutes a run takes (other load, the host), and the target uses the mean of the two.
  const resumedOptions = {
    certificates: certificates.slice(0, workers),
    keyPem: ctx.keyPem,
    caPem: ctx.caPem,
    concurrency: 32,
  }
  const measureResumed = (servers: { url: string; pid: number | undefined }[]) =>
    measure(servers, 'resumed', resumedOptions, { seconds: resumedSeconds, rounds: 2, warmupSeconds: 2 })
  say(`the resumed-handshake rate of both servers (${resumedSeconds} s each)`)
  const before = await measureResumed([
    { url: `https://127.0.0.1:${bare.port}`, pid: bare.child.pid },
    { url: gateway.agentUrl, pid: gateway.child.pid },
  ])

  const rows: { name: string; result: StormResult; cpu: StormCpu }[] = []
  const restarted: { url: string; pid: number | undefined; child: ChildProcess }[] = []
  const servers: [Target, { child: ChildProcess; port: number }][] = [
    [{ name: 'bare node:https', start: startBare }, bare],
    [{ name: 'fleetkit gateway', start: startGateway }, gateway],
  ]
  for (const [target, running] of servers) {
    const files = await Promise.all(
      Array.from({ length: workers }, async (_, w) => {
        const file = join(dir, `storm-${target.name.split(' ')[0]}-${w}.json`)
        const slice = certificates.filter((_, i) => i % workers === w)
        await writeFile(
          file,
          JSON.stringify({
            url: `https://127.0.0.1:${running.port}`,
            caPem: ctx.caPem,
            keyPem: ctx.keyPem,
            certificates: slice,
            heartbeatMs: heartbeatSeconds * 1000,
            deadlineMs: deadlineSeconds * 1000,
          }),
        )
        return file
      }),
    )
    const { result, cpu, server } = await stormOn(target, files, running, db.pid)
    children.add(server)
    rows.push({ name: target.name, result, cpu })
    restarted.push({ url: `https://127.0.0.1:${running.port}`, pid: server.pid, child: server })
  }
  say('the resumed-handshake rate of both restarted servers, after the storms')
  const after = await measureResumed(restarted)
  for (const r of restarted) await stopChild(r.child)
  const rate = (i: number) => ((before[i]?.rate ?? Number.NaN) + (after[i]?.rate ?? Number.NaN)) / 2
  const targetMs = (1.5 * agentCount * 1000) / rate(0)

  process.stdout.write(
    `${agentCount} agents in ${workers} processes, heartbeat interval ${heartbeatSeconds} s, deadline ${deadlineSeconds} s; load average ${loadText()} at the end\n\n`,
  )
  const rates = (i: number) =>
    `${before[i]!.rate.toFixed(0)} before, ${after[i]!.rate.toFixed(0)} after (mean ${rate(i).toFixed(0)})`
  process.stdout.write(
    `resumed handshakes/s: bare ${rates(0)}; fleetkit ${rates(1)}; ${(rate(1) / rate(0)).toFixed(2)}x\n`,
  )
  process.stdout.write(
    `target: every agent back within 1.5 x ${agentCount} / ${rate(0).toFixed(0)} = ${(targetMs / 1000).toFixed(1)} s, none unrecoverable\n\n`,
  )
  process.stdout.write(
    '| server | all back after | p50 / p99 back | resumed sessions | attempts | failed attempts (recovered by retry) | not back by the deadline | unrecoverable | CPU: server / PostgreSQL / agents |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n',
  )
  const seconds = (micros: number | undefined) => (micros === undefined ? 'n/a' : `${(micros / 1e6).toFixed(1)} s`)
  for (const { name, result: r, cpu } of rows) {
    const failures =
      Object.entries(r.failures)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ') || 'none'
    const all = r.back === r.agents ? `${(r.lastBackMs / 1000).toFixed(1)} s` : `not all (${r.back} of ${r.agents})`
    process.stdout.write(
      `| ${name} | ${all} | ${(r.p50Ms / 1000).toFixed(1)} / ${(r.p99Ms / 1000).toFixed(1)} s | ${r.resumed} | ${r.attempts} | ${failures} | ${r.agents - r.back - r.unrecoverable} | ${r.unrecoverable} | ${seconds(cpu.server)} / ${seconds(cpu.postgres)} / ${seconds(cpu.agents)} |\n`,
    )
  }
  const gatewayRow = rows.at(-1)!.result
  const met =
    gatewayRow.back === gatewayRow.agents && gatewayRow.unrecoverable === 0 && gatewayRow.lastBackMs <= targetMs
  process.stdout.write(
    `\ngateway: ${met ? 'target met' : 'target NOT met'} (${gatewayRow.back === gatewayRow.agents ? `${(gatewayRow.lastBackMs / 1000).toFixed(1)} s` : `${gatewayRow.back} of ${gatewayRow.agents} back`} against ${(targetMs / 1000).toFixed(1)} s; ${((gatewayRow.lastBackMs * rate(0)) / agentCount / 1000).toFixed(2)} x ${agentCount} / the bare rate, the target allows 1.50)\n`,
  )
})
clearTimeout(hardStop)
