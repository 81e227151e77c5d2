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

import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'

import { type BenchContext, buildFleet, enrollments } from './gateway/agents.js'
import { startChild, stopChild } from './gateway/child.js'
import { startGatewayProcess } from './gateway/driver.js'
import { flag, loadText } from './gateway/flags.js'
import { startBenchPostgres } from './gateway/postgres.js'
import { type Measured, measure, type Mode, MODES } from './gateway/ratio-measure.js'
import { printEnrollments } from './gateway/report.js'

const micros = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(0)} µs`)

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
  for (const mode of modes as Mode[]) {
    const loops = mode === 'keepalive' ? keepaliveConcurrency : concurrency
    const [b, f] = await measure([{ url: bareUrl, pid: bare.child.pid }, { url: gateway.agentUrl, pid: gateway.child.pid }], mode, { certificates, keyPem: ctx.keyPem, caPem: ctx.caPem, concurrency: loops }, { seconds, rounds, warmupSeconds }) as [Measured, Measured]
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
  for (const child of children) await stopChild(child)
  await admin.end().catch(() => undefined)
  await db.stop()
  await rm(dir, { recursive: true, force: true })
}
clearTimeout(hardStop)
