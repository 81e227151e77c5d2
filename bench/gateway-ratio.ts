// The gateway beside a bare node:https mTLS server, in the same run (issue 12, item 5): client
// processes (not this one, not the gateway's) measure full mTLS handshakes/s, resumed handshakes/s
// and keep-alive requests/s against each, and fleetkit's figures are printed as ratios of the bare ones.
//
//   npx tsx bench/gateway-ratio.ts [--seconds 10] [--rounds 5] [--warmup-seconds 3] [--workers 2] [--concurrency 32] [--keepalive-concurrency 128] [--enrollments 0] [--modes full,resumed,keepalive] [--drift] [--paced 0]
//
// --drift measures each mode twice, the second time with a drift digest in every heartbeat (issue 39:
// the node's recorded fingerprint matches, as in a converged fleet), and prints the gateway's added CPU per heartbeat.
//
// --paced P then measures each mode again with both servers offered the same rate, P% of the slower one's
// rate above (paced clients, never faster), and prints that row too: each server's CPU per request falls as
// its rate rises (more requests per read and per turn of the event loop), so at saturation a server a little
// slower also pays more per request; at one offered rate below both capacities the CPU compares the work.
//
// --enrollments N then enrolls N nodes through POST /v1/enroll (32 at a time, rate limit lifted) and prints the rate,
// and its ratio to the bare server's full-handshake rate of the same run when `full` was measured.
//
// Loopback only, bounded in time, stops by itself. The gateway answers POST /v1/agent/heartbeat
// (authentication, body reading and checking, coalescing); the bare server reads the same request's
// body and answers with the same fields and headers. Same server certificate and CA bundle, same
// client certificates and clients. Each measurement alternates short windows on the two servers
// (--rounds) so a change of the machine's load weighs on both; each server's CPU time per request is
// read from /proc around its windows (what a request costs it, whatever else shares the cores).
import 'reflect-metadata'

import { buildFleet, enrollments } from './gateway/agents.js'
import { startChild } from './gateway/child.js'
import { startGatewayProcess } from './gateway/driver.js'
import { flag, loadText } from './gateway/flags.js'
import { type Measured, measure, type Mode, MODES } from './gateway/ratio-measure.js'
import { BENCH_DRIFT, recordBenchFingerprints } from './gateway/drift-digest.js'
import { printEnrollments } from './gateway/report.js'
import { createBenchContext, createBenchPki, withBenchRun } from './gateway/setup.js'

const micros = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(0)} µs`)
/** fleetkit's CPU per request over the bare server's (issue 40's 1.15x target), printed so nobody divides by hand. */
const cpuRatio = (b: Measured, f: Measured) =>
  b.serverCpuPerRequest === undefined || f.serverCpuPerRequest === undefined || b.serverCpuPerRequest === 0
    ? 'n/a'
    : `${(f.serverCpuPerRequest / b.serverCpuPerRequest).toFixed(2)}x`

/** Issue 40's goals: CPU per request within 1.15x the bare server's; at saturation also a rate of at least 0.95x. */
const CPU_GOAL = 1.15
const RATE_GOAL = 0.95
function goalText(b: Measured, f: Measured, saturated: boolean): string {
  const cpu =
    b.serverCpuPerRequest === undefined || f.serverCpuPerRequest === undefined || b.serverCpuPerRequest === 0
      ? undefined
      : f.serverCpuPerRequest / b.serverCpuPerRequest
  const rate = f.rate / b.rate
  const met = cpu !== undefined && cpu <= CPU_GOAL && (!saturated || rate >= RATE_GOAL)
  return `${met ? 'met' : 'NOT met'} (CPU ${cpu === undefined ? 'n/a' : `${cpu.toFixed(2)}x`}${saturated ? `, rate ${rate.toFixed(2)}x` : ''})`
}

function writeRow(label: string, b: Measured, f: Measured): void {
  const client = (b.clientCpuPerRequest + f.clientCpuPerRequest) / 2
  process.stdout.write(
    `| ${label} | ${b.rate.toFixed(0)} | ${f.rate.toFixed(0)} | ${(f.rate / b.rate).toFixed(2)}x | ${f.p50.toFixed(1)} / ${f.p99.toFixed(1)} ms | ${micros(b.serverCpuPerRequest)} / ${micros(f.serverCpuPerRequest)} | ${cpuRatio(b, f)} | ${micros(client)} | ${b.errors} / ${f.errors} |\n`,
  )
}

const seconds = flag('seconds', 10)
const rounds = flag('rounds', 5)
const warmupSeconds = flag('warmup-seconds', 3, 0)
const workers = flag('workers', 2)
const concurrency = flag('concurrency', 32)
const keepaliveConcurrency = flag('keepalive-concurrency', 128)
const enrollCount = flag('enrollments', 0, 0)
const pacedPercent = flag('paced', 0, 0, 100)
const withDrift = process.argv.includes('--drift')
const modesAt = process.argv.indexOf('--modes')
const modes = modesAt >= 0 ? (process.argv[modesAt + 1] ?? '').split(',') : [...MODES]
if (modes.length === 0 || modes.some((m) => !(MODES as readonly string[]).includes(m)))
  throw new Error(`--modes takes a comma-separated list of ${MODES.join(', ')}`)
const hardStop = setTimeout(
  () => {
    process.stderr.write('bench: over the hard limit, stopping\n')
    process.exit(3)
  },
  (seconds * 6 * 3 * (withDrift ? 2 : 1) * (pacedPercent > 0 ? 2 : 1) + 300) * 1000,
)
hardStop.unref()

await withBenchRun('fleetkit-bench-ratio-', async ({ dir, db, admin, children }) => {
  const { pkiDir, pki } = await createBenchPki(dir)
  const gateway = await startGatewayProcess(db.url, pkiDir)
  children.add(gateway.child)
  // BENCH_BARE_NODE_ARGS: node flags for the bare server only (`--cpu-prof --cpu-prof-dir=DIR`, to compare with the gateway's profile).
  const bare = await startChild(
    'bare-server.ts',
    { BENCH_PKI_DIR: pkiDir },
    (process.env.BENCH_BARE_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''),
  )
  children.add(bare.child)
  const bareUrl = `https://127.0.0.1:${bare.first.port as number}`
  const ctx = await createBenchContext(db, admin, pki, gateway)
  const fleet = await buildFleet(workers, 'ratio', ctx)
  for (const a of fleet.agents) a.agent.destroy()
  if (withDrift)
    await recordBenchFingerprints(
      ctx.pool,
      fleet.agents.map((a) => a.nodeId),
    )
  const certificates = fleet.agents.map((a) => a.certificatePem)
  process.stdout.write(
    `${workers} client processes per server, ${seconds} s per measurement in ${rounds} alternating windows after ${warmupSeconds} s of warm-up, ${concurrency} loops each (${keepaliveConcurrency} keep-alive connections each)\n`,
  )
  process.stdout.write(`load average ${loadText()} before the first measurement\n\n`)
  process.stdout.write(
    '| measure | bare node:https | fleetkit gateway | ratio | fleetkit p50 / p99 | server CPU per request (bare / fleetkit) | fleetkit / bare CPU | client CPU per request | errors (bare / fleetkit) |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n',
  )
  const added: string[] = []
  const goals: string[] = []
  /** The bare server's full-handshake rate: enrollments are set against it (issue 40, item 3). */
  let bareFullRate: number | undefined
  for (const mode of modes as Mode[]) {
    const loops = mode === 'keepalive' ? keepaliveConcurrency : concurrency
    const name = {
      full: 'full mTLS handshakes/s',
      resumed: 'resumed handshakes/s',
      keepalive: 'keep-alive requests/s',
    }[mode]
    let plain: Measured[] | undefined
    for (const drift of withDrift ? [false, true] : [false]) {
      /** Both servers in this mode; with a rate, each client process offers that many requests a second. */
      const both = async (ratePerSecond?: number) =>
        (await measure(
          [
            { url: bareUrl, pid: bare.child.pid },
            { url: gateway.agentUrl, pid: gateway.child.pid },
          ],
          mode,
          {
            certificates,
            keyPem: ctx.keyPem,
            caPem: ctx.caPem,
            concurrency: loops,
            ...(ratePerSecond === undefined ? {} : { ratePerSecond }),
            ...(drift ? { extra: { drift: BENCH_DRIFT } } : {}),
          },
          { seconds, rounds, warmupSeconds },
        )) as [Measured, Measured]
      const [b, f] = await both()
      writeRow(`${name}${drift ? ', with a drift digest' : ''}`, b, f)
      // The bare server reads the same larger body: its difference is the body's, the rest the judgement's.
      const more = (now: Measured, before: Measured | undefined) =>
        now.serverCpuPerRequest === undefined || before?.serverCpuPerRequest === undefined
          ? undefined
          : now.serverCpuPerRequest - before.serverCpuPerRequest
      let goal = `${mode}: saturated ${goalText(b, f, true)}`
      if (pacedPercent > 0) {
        const offered = (Math.min(b.rate, f.rate) * pacedPercent) / 100
        const [pb, pf] = await both(offered / certificates.length)
        writeRow(`${name}${drift ? ', with a drift digest' : ''}, both offered ${offered.toFixed(0)}/s`, pb, pf)
        goal += `, paced ${goalText(pb, pf, false)}`
      }
      if (!drift) goals.push(goal)
      if (mode === 'full' && !drift) bareFullRate = b.rate
      if (!drift) plain = [b, f]
      else
        added.push(
          `${name}: gateway ${micros(more(f, plain?.[1]))}, bare server reading the same body ${micros(more(b, plain?.[0]))} of CPU per heartbeat`,
        )
    }
  }
  if (added.length > 0) process.stdout.write(`\nadded by the drift digest: ${added.join('; ')}\n`)
  process.stdout.write(`\nload average ${loadText()} after the last measurement\n`)
  let enrollGoal = ''
  if (enrollCount > 0) {
    process.stdout.write('\n')
    const enrolled = await enrollments(ctx, enrollCount)
    printEnrollments(enrolled, bareFullRate)
    if (bareFullRate !== undefined && bareFullRate > 0) {
      const ratio = enrolled.perSecond / bareFullRate
      enrollGoal = `; enrollments ${ratio >= 0.5 ? 'met' : 'NOT met'} (${ratio.toFixed(2)}x of the bare full-handshake rate, goal 0.5x)`
    }
  }
  process.stdout.write(
    `\ngoals (CPU per request <= ${CPU_GOAL}x the bare server's; saturated also a rate >= ${RATE_GOAL}x): ${goals.join('; ')}${enrollGoal}\n`,
  )
})
clearTimeout(hardStop)
