// The gateway beside a bare node:https mTLS server, in the same run (issue 12, item 5): client
// processes (not this one, not the gateway's) measure full mTLS handshakes/s, resumed handshakes/s
// and keep-alive requests/s against each, and fleetkit's figures are printed as ratios of the bare ones.
//
//   npx tsx bench/gateway-ratio.ts [--seconds 10] [--rounds 5] [--warmup-seconds 3] [--workers 2] [--concurrency 32] [--keepalive-concurrency 128] [--enrollments 0] [--modes full,resumed,keepalive]
//
// --enrollments N then enrolls N nodes through POST /v1/enroll (32 at a time, rate limit lifted) and prints the rate.
//
// Loopback only, bounded in time, stops by itself. The gateway answers POST /v1/agent/heartbeat
// (authentication, body reading and checking, coalescing); the bare server reads the same request's
// body and answers with the same fields and headers. Same server certificate and CA bundle, same
// client certificates and clients. Each measurement alternates short windows on the two servers
// (--rounds) so a change of the machine's load weighs on both; each server's CPU time per request is
// read from /proc around its windows (what a request costs it, whatever else shares the cores).
import 'reflect-metadata'

import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

import pg from 'pg'

import { packagePath } from '../src/package-root.js'
import { type BenchContext, buildFleet, enrollments } from './gateway/agents.js'
import { printEnrollments } from './gateway/report.js'
import { startGatewayProcess } from './gateway/driver.js'
import { startBenchPostgres } from './gateway/postgres.js'
import { processCpuMicros } from './gateway/process-cpu.js'

const MODES = ['full', 'resumed', 'keepalive'] as const
const FACTS = { cpu_count: 8, memory_mb: 32000, data_disk_free_gb: 400, kernel: '6.8.0-45-generic', docker_version: '27.3.1', agent_version: '0.1.0', bridge_netfilter: true, clock_skew_ms: 3 }

function flag(name: string, fallback: number, min = 1): number {
  const i = process.argv.indexOf(`--${name}`)
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback
  if (!Number.isInteger(value) || value < min || value > 10_000) throw new Error(`--${name} must be a whole number from ${min} to 10000`)
  return value
}

interface Child { child: ChildProcess; first: Record<string, unknown>; nextLine: () => Promise<string> }

function startChild(script: string, env: Record<string, string>, nodeArgs: string[] = []): Promise<Child> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', packagePath('bench', 'gateway', script)], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] })
  // Every line the child prints, in order: the first resolves start-up, the rest are read with nextLine().
  const lines: string[] = []
  const waiting: ((line: string) => void)[] = []
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const waiter = waiting.shift()
    if (waiter) waiter(line)
    else lines.push(line)
  })
  const nextLine = () => new Promise<string>((resolve) => {
    const line = lines.shift()
    if (line === undefined) waiting.push(resolve)
    else resolve(line)
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} printed nothing within 120 s`)), 120_000)
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)))
    void nextLine().then((line) => {
      clearTimeout(timer)
      child.removeAllListeners('exit')
      resolve({ child, first: JSON.parse(line) as Record<string, unknown>, nextLine })
    })
  })
}

interface Window { ok: number; errors: number; p50: number; p99: number; cpuMicros: number }
interface Measured { rate: number; errors: number; p50: number; p99: number; serverCpuPerRequest: number | undefined; clientCpuPerRequest: number }

/** The client processes of one server, warmed up (connections open, a session to resume) and waiting for windows. */
async function startClients(url: string, mode: (typeof MODES)[number], certificates: string[], keyPem: string, caPem: string, concurrency: number): Promise<Child[]> {
  return Promise.all(certificates.map((certPem) => {
    const job = { url, path: '/v1/agent/heartbeat', body: JSON.stringify({ facts: FACTS }), keyPem, certPem, caPem, mode, concurrency }
    return startChild('ratio-client.ts', { BENCH_JOB: JSON.stringify(job) })
  }))
}

/** One window: every client of a server starts at once; the server's CPU time is read around it. */
async function runWindow(clients: Child[], serverPid: number | undefined, ms: number, warmup = false): Promise<{ windows: Window[]; serverCpuMicros: number | undefined }> {
  const before = processCpuMicros(serverPid)
  const windows = await Promise.all(clients.map(({ child, nextLine }) => {
    child.stdin!.write(`${ms}${warmup ? ' warmup' : ''}\n`)
    return nextLine().then((text) => JSON.parse(text) as Window)
  }))
  const after = processCpuMicros(serverPid)
  return { windows, serverCpuMicros: before === undefined || after === undefined ? undefined : after - before }
}

/**
 * Both servers in one mode: `rounds` windows each, alternating (bare, gateway, gateway, bare, ...), so a
 * change of the machine's load during the run weighs on both alike; the rates are totals over the windows.
 */
async function measure(servers: { url: string; pid: number | undefined }[], mode: (typeof MODES)[number], certificates: string[], keyPem: string, caPem: string, concurrency: number): Promise<Measured[]> {
  const clients = [] as Child[][]
  for (const s of servers) clients.push(await startClients(s.url, mode, certificates, keyPem, caPem, concurrency))
  // Not counted: each server first answers a window of the same load, so code the JIT is still
  // compiling after start-up (more of it in the gateway) does not weigh on the figures; servers run for days.
  for (let i = 0; i < servers.length; i++) await runWindow(clients[i]!, servers[i]!.pid, warmupSeconds * 1000, true)
  const windows: Window[][] = servers.map(() => [])
  const serverCpu: (number | undefined)[] = servers.map(() => 0)
  const windowMs = (seconds * 1000) / rounds
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? [0, 1] : [1, 0]
    for (const i of order) {
      const w = await runWindow(clients[i]!, servers[i]!.pid, windowMs)
      windows[i]!.push(...w.windows)
      serverCpu[i] = serverCpu[i] === undefined || w.serverCpuMicros === undefined ? undefined : serverCpu[i]! + w.serverCpuMicros
    }
  }
  for (const set of clients) for (const { child } of set) child.stdin!.end()
  return windows.map((ws, i) => {
    const answered = ws.reduce((n, w) => n + w.ok + w.errors, 0)
    // Percentiles are per client over all its windows: the worst client's.
    const last = ws.slice(-certificates.length)
    return {
      rate: ws.reduce((n, w) => n + w.ok, 0) / seconds,
      errors: ws.reduce((n, w) => n + w.errors, 0),
      p50: Math.max(...last.map((w) => w.p50)),
      p99: Math.max(...last.map((w) => w.p99)),
      serverCpuPerRequest: serverCpu[i] === undefined ? undefined : serverCpu[i]! / answered,
      clientCpuPerRequest: ws.reduce((n, w) => n + w.cpuMicros, 0) / answered,
    }
  })
}

const micros = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(0)} µs`)
const loadText = () => loadavg().map((n) => n.toFixed(2)).join(' / ')

const seconds = flag('seconds', 10)
const rounds = flag('rounds', 5)
const warmupSeconds = flag('warmup-seconds', 3, 0)
const workers = flag('workers', 2)
const concurrency = flag('concurrency', 32)
const keepaliveConcurrency = flag('keepalive-concurrency', 128)
const enrollCount = flag('enrollments', 0, 0)
const modesAt = process.argv.indexOf('--modes')
const modes = modesAt >= 0 ? (process.argv[modesAt + 1] ?? '').split(',') : [...MODES]
if (modes.length === 0 || modes.some((m) => !(MODES as readonly string[]).includes(m))) throw new Error(`--modes takes a comma-separated list of ${MODES.join(', ')}`)
const hardStop = setTimeout(() => { process.stderr.write('bench: over the hard limit, stopping\n'); process.exit(3) }, (seconds * 6 * 3 + 300) * 1000)
hardStop.unref()

const { initPki } = await import('../src/pki/init-pki.js')
const { loadPkiSet } = await import('../src/pki/pki-set.js')
const { generateP256KeyPair, privateKeyToPem } = await import('../src/pki/keys.js')
const { x509 } = await import('../src/pki/x509-provider.js')
const dir = await mkdtemp(join(tmpdir(), 'fleetkit-bench-ratio-'))
const db = await startBenchPostgres()
const admin = new pg.Client({ connectionString: db.adminUrl })
const children: ChildProcess[] = []
try {
  await admin.connect()
  const pkiDir = join(dir, 'pki')
  await initPki({ pkiDir, serverNames: ['127.0.0.1'], now: new Date() })
  const pki = await loadPkiSet(pkiDir, new Date())
  const gateway = await startGatewayProcess(db.url, pkiDir)
  children.push(gateway.child)
  // BENCH_BARE_NODE_ARGS: node flags for the bare server only (`--cpu-prof --cpu-prof-dir=DIR`, to compare with the gateway's profile).
  const bare = await startChild('bare-server.ts', { BENCH_PKI_DIR: pkiDir }, (process.env.BENCH_BARE_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''))
  children.push(bare.child)
  const bareUrl = `https://127.0.0.1:${bare.first.port as number}`
  const keys = await generateP256KeyPair()
  const ctx: BenchContext = {
    pool: db.pool, admin, database: db.database, enrollUrl: gateway.enrollUrl, agentUrl: gateway.agentUrl, caPem: pki.bundlePem,
    keyPem: await privateKeyToPem(keys.privateKey), keys, publicKey: await x509.PublicKey.create(keys.publicKey), ca: pki.ca,
  }
  const fleet = await buildFleet(workers, 'ratio', ctx)
  for (const a of fleet.agents) a.agent.destroy()
  const certificates = fleet.agents.map((a) => a.certificatePem)
  process.stdout.write(`${workers} client processes per server, ${seconds} s per measurement in ${rounds} alternating windows after ${warmupSeconds} s of warm-up, ${concurrency} loops each (${keepaliveConcurrency} keep-alive connections each)\n`)
  process.stdout.write(`load average ${loadText()} before the first measurement\n\n`)
  process.stdout.write('| measure | bare node:https | fleetkit gateway | ratio | fleetkit p50 / p99 | server CPU per request (bare / fleetkit) | client CPU per request | errors (bare / fleetkit) |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n')
  for (const mode of modes as (typeof MODES)[number][]) {
    const loops = mode === 'keepalive' ? keepaliveConcurrency : concurrency
    const [b, f] = await measure([{ url: bareUrl, pid: bare.child.pid }, { url: gateway.agentUrl, pid: gateway.child.pid }], mode, certificates, ctx.keyPem, ctx.caPem, loops) as [Measured, Measured]
    const name = { full: 'full mTLS handshakes/s', resumed: 'resumed handshakes/s', keepalive: 'keep-alive requests/s' }[mode]
    const client = (b.clientCpuPerRequest + f.clientCpuPerRequest) / 2
    process.stdout.write(`| ${name} | ${b.rate.toFixed(0)} | ${f.rate.toFixed(0)} | ${(f.rate / b.rate).toFixed(2)}x | ${f.p50.toFixed(1)} / ${f.p99.toFixed(1)} ms | ${micros(b.serverCpuPerRequest)} / ${micros(f.serverCpuPerRequest)} | ${micros(client)} | ${b.errors} / ${f.errors} |\n`)
  }
  process.stdout.write(`\nload average ${loadText()} after the last measurement\n`)
  if (enrollCount > 0) {
    process.stdout.write('\n')
    printEnrollments(await enrollments(ctx, enrollCount))
  }
} finally {
  for (const child of children) {
    if (child.exitCode !== null) continue
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  }
  await admin.end().catch(() => undefined)
  await db.stop()
  await rm(dir, { recursive: true, force: true })
}
clearTimeout(hardStop)
