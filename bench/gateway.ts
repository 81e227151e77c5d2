// Gateway benchmark: N simulated agents on keep-alive mTLS connections heartbeating against a
// real gateway (its own process) and a real PostgreSQL on this machine; enrollments and a reconnect storm.
//
//   npx tsx bench/gateway.ts [--agents 1000,10000] [--seconds 20] [--interval-ms 1000] [--enrollments 1000]
//                            [--budget-seconds 600] [--no-docs]
//
// Loopback only, bounded in agents and time, stops by itself. Agents are enrolled directly
// through the store and the PKI (one shared key, a certificate each) to save time; the
// enrollment figure goes through POST /v1/enroll. Figures are appended to docs/performance.md.
import 'reflect-metadata'

import { type ChildProcess, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { Agent, request as httpsRequest } from 'node:https'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { performance } from 'node:perf_hooks'

import type { PublicKey } from '@peculiar/x509'
import pg from 'pg'

import { packagePath } from '../src/package-root.js'
import type { IssuingCa } from '../src/pki/certificate-authority.js'

interface Options {
  agents: number[]
  seconds: number
  intervalMs: number
  enrollments: number
  budgetSeconds: number
  docs: boolean
}

function parseOptions(argv: string[]): Options {
  const options: Options = { agents: [1000, 10000], seconds: 20, intervalMs: 1000, enrollments: 1000, budgetSeconds: 600, docs: true }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]
    const value = () => {
      const v = argv[++i]
      if (v === undefined) throw new Error(`${flag} needs a value`)
      return v
    }
    if (flag === '--agents') options.agents = value().split(',').map((n) => Math.min(Math.max(Number(n), 1), 10_000))
    else if (flag === '--seconds') options.seconds = Math.min(Math.max(Number(value()), 5), 120)
    else if (flag === '--interval-ms') options.intervalMs = Math.max(Number(value()), 0)
    else if (flag === '--enrollments') options.enrollments = Math.min(Math.max(Number(value()), 0), 10_000)
    else if (flag === '--budget-seconds') options.budgetSeconds = Math.min(Math.max(Number(value()), 60), 1800)
    else if (flag === '--no-docs') options.docs = false
    else throw new Error(`unknown flag ${flag}`)
  }
  return options
}

// ---------------------------------------------------------------------------------------------
// The gateway under test runs in a child process (`--serve`), so it has a core of its own.

async function serve(): Promise<void> {
  const { openDatabase } = await import('../src/store/database.js')
  const { startGateway } = await import('../src/gateway/gateway.js')
  const { loadPkiSet } = await import('../src/pki/pki-set.js')
  const { silentLogger } = await import('../src/log/logger.js')
  const db = await openDatabase({ databaseUrl: process.env.BENCH_DATABASE_URL })
  const lifted = { perSource: { burst: 100_000, perSecond: 100_000 }, global: { burst: 100_000, perSecond: 100_000 } }
  const any = { host: '127.0.0.1', port: 0 }
  const gateway = await startGateway({
    pool: db.pool,
    pki: await loadPkiSet(process.env.BENCH_PKI_DIR!, new Date()),
    enrollBind: any,
    agentBind: any,
    agentCertLifetimeSeconds: 86400,
    logger: silentLogger,
    // Default tuning, except the enrollment limit: the bench measures issuance capacity, not the limiter.
    tuning: { enrollRate: lifted },
  })
  process.stdout.write(`${JSON.stringify({ ready: true, enroll: gateway.enrollAddress.port, agent: gateway.agentAddress.port })}\n`)
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

async function startGatewayProcess(databaseUrl: string, pkiDir: string): Promise<{ child: ChildProcess; enrollUrl: string; agentUrl: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', packagePath('bench', 'gateway.ts'), '--serve'], {
    env: { ...process.env, BENCH_DATABASE_URL: databaseUrl, BENCH_PKI_DIR: pkiDir },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the gateway did not start within 60 s')), 60_000)
    child.once('exit', (code) => reject(new Error(`the gateway exited with ${code}`)))
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const ready = JSON.parse(line) as { ready?: boolean; enroll: number; agent: number }
      if (!ready.ready) return
      clearTimeout(timer)
      child.removeAllListeners('exit')
      resolve({ child, enrollUrl: `https://127.0.0.1:${ready.enroll}`, agentUrl: `https://127.0.0.1:${ready.agent}` })
    })
  })
}

// ---------------------------------------------------------------------------------------------
// Helpers

async function forEachLimit<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++
        await fn(items[index]!, index)
      }
    }),
  )
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const ms = (value: number) => `${value.toFixed(value < 10 ? 1 : 0)} ms`

interface Reply {
  status: number
  body: string
}

function post(agent: Agent | undefined, base: string, path: string, body: unknown, tls: { ca: string }): Promise<Reply> {
  const text = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = httpsRequest(new URL(path, base), { method: 'POST', agent, ca: tls.ca, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }, timeout: 120_000 }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', reject)
    req.end(text)
  })
}

/** xact_commit of the database, and the server's transaction-ID counter (advances once per write transaction). */
async function databaseCounters(admin: pg.Client, database: string): Promise<{ xactCommit: number; xid: number }> {
  const stats = await admin.query<{ xact_commit: string }>('SELECT xact_commit FROM pg_stat_database WHERE datname = $1', [database])
  const xid = await admin.query<{ xid: string }>('SELECT txid_current()::text AS xid')
  return { xactCommit: Number(stats.rows[0]!.xact_commit), xid: Number(xid.rows[0]!.xid) }
}

/** Shared-memory statistics reach pg_stat_database up to ~10 s after an idle backend's commit: wait that out. */
const STATS_SETTLE_MS = 11_000

// ---------------------------------------------------------------------------------------------
// The fleet: nodes, certificates and clients

interface SimulatedAgent {
  nodeId: string
  certificatePem: string
  agent: Agent
}

interface Fleet {
  agents: SimulatedAgent[]
  setupMs: number
}

async function buildFleet(count: number, prefix: string, ctx: BenchContext): Promise<Fleet> {
  const started = performance.now()
  const { upsertDeclaredNode, setNodeStatus } = await import('../src/store/nodes.js')
  const { insertNodeCertificate } = await import('../src/store/certificates.js')
  const { issueClientCertificate } = await import('../src/pki/client-certificate.js')
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(5, '0')}`)
  const certificates: string[] = new Array(count)
  await forEachLimit(ids, 16, async (nodeId, i) => {
    await upsertDeclaredNode(ctx.pool, { id: nodeId, pool: 'bench' })
    await setNodeStatus(ctx.pool, nodeId, 'active')
    const now = new Date()
    const issued = await issueClientCertificate({ ca: ctx.ca, subjectPublicKey: ctx.publicKey, nodeId, now, lifetimeSeconds: 86400 })
    await insertNodeCertificate(ctx.pool, { nodeId, fingerprintSha256: issued.fingerprintSha256, serial: issued.serial, notBefore: issued.notBefore, notAfter: issued.notAfter, issuerCaSha256: issued.issuerCaSha256, now })
    certificates[i] = issued.certificatePem
  })
  const agents = ids.map((nodeId, i) => ({ nodeId, certificatePem: certificates[i]!, agent: newClient(ctx, certificates[i]!) }))
  return { agents, setupMs: performance.now() - started }
}

function newClient(ctx: BenchContext, certificatePem: string): Agent {
  return new Agent({ keepAlive: true, maxSockets: 1, key: ctx.keyPem, cert: certificatePem, ca: ctx.caPem })
}

const FACTS = { cpu_count: 8, memory_mb: 32000, data_disk_free_gb: 400, kernel: '6.8.0-45-generic', docker_version: '27.3.1', agent_version: '0.1.0', bridge_netfilter: true, clock_skew_ms: 3 }

async function heartbeat(ctx: BenchContext, agent: Agent): Promise<number> {
  const start = performance.now()
  const reply = await post(agent, ctx.agentUrl, '/v1/agent/heartbeat', { facts: FACTS }, { ca: ctx.caPem })
  if (reply.status !== 200) throw new Error(`heartbeat answered ${reply.status}: ${reply.body.slice(0, 200)}`)
  return performance.now() - start
}

interface ConnectResult {
  count: number
  wallMs: number
  p50: number
  p99: number
  errors: number
  reasons: Map<string, number>
}

/** Why requests failed, by Node error code (ECONNRESET, ETIMEDOUT, ...) or HTTP status. */
function countReason(reasons: Map<string, number>, error: unknown): void {
  const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message.slice(0, 40)
  reasons.set(code, (reasons.get(code) ?? 0) + 1)
}

function reasonText(...maps: Map<string, number>[]): string {
  const total = new Map<string, number>()
  for (const map of maps) for (const [k, v] of map) total.set(k, (total.get(k) ?? 0) + v)
  return [...total].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${v} ${k}`).join(', ')
}

/** Every agent sends one heartbeat at the same moment (new connections: full TLS handshakes). */
async function connectAll(ctx: BenchContext, agents: SimulatedAgent[]): Promise<ConnectResult> {
  const latencies: number[] = []
  const reasons = new Map<string, number>()
  let errors = 0
  const started = performance.now()
  await Promise.all(
    agents.map(async (a) => {
      try {
        latencies.push(await heartbeat(ctx, a.agent))
      } catch (error) {
        errors++
        countReason(reasons, error)
      }
    }),
  )
  const wallMs = performance.now() - started
  latencies.sort((x, y) => x - y)
  return { count: agents.length, wallMs, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors, reasons }
}

interface SustainResult {
  seconds: number
  heartbeats: number
  perSecond: number
  p50: number
  p99: number
  errors: number
  reasons: Map<string, number>
  xactCommitPerSecond: number
  writeTransactionsPerSecond: number
}

/** Each agent heartbeats every intervalMs (or as soon as its last answer came, when slower) for `seconds`. */
async function sustain(ctx: BenchContext, agents: SimulatedAgent[], seconds: number, intervalMs: number): Promise<SustainResult> {
  await sleep(STATS_SETTLE_MS)
  const before = await databaseCounters(ctx.admin, ctx.database)
  const latencies: number[] = []
  const reasons = new Map<string, number>()
  let errors = 0
  const started = performance.now()
  const deadline = started + seconds * 1000
  await Promise.all(
    agents.map(async (a, i) => {
      // Spread the first beats over one interval, as agents started at different times would.
      await sleep(intervalMs > 0 ? (i / agents.length) * intervalMs : 0)
      while (performance.now() < deadline) {
        const t0 = performance.now()
        try {
          latencies.push(await heartbeat(ctx, a.agent))
        } catch (error) {
          errors++
          countReason(reasons, error)
        }
        const wait = intervalMs - (performance.now() - t0)
        if (wait > 0 && performance.now() + wait < deadline) await sleep(wait)
        else if (wait > 0) break
      }
    }),
  )
  const elapsed = (performance.now() - started) / 1000
  await sleep(STATS_SETTLE_MS)
  const after = await databaseCounters(ctx.admin, ctx.database)
  latencies.sort((x, y) => x - y)
  return {
    seconds: elapsed,
    heartbeats: latencies.length,
    perSecond: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
    reasons,
    // The quiet settle periods add a few commits of their own (sweeps); they are counted against the load window.
    xactCommitPerSecond: (after.xactCommit - before.xactCommit) / elapsed,
    writeTransactionsPerSecond: (after.xid - before.xid - 1) / elapsed,
  }
}

interface EnrollResult {
  count: number
  perSecond: number
  p50: number
  p99: number
  refused: number
}

/** Real POST /v1/enroll: CSR check, one conditional UPDATE, issuance, insert, event. 32 clients at once. */
async function enrollments(ctx: BenchContext, count: number): Promise<EnrollResult> {
  const { upsertDeclaredNode, issueEnrollmentSecret } = await import('../src/store/nodes.js')
  const { x509 } = await import('../src/pki/x509-provider.js')
  const ids = Array.from({ length: count }, (_, i) => `bench-enroll-${String(i).padStart(5, '0')}`)
  const prepared: { nodeId: string; secret: string; csrPem: string }[] = new Array(count)
  await forEachLimit(ids, 16, async (nodeId, i) => {
    const secret = randomBytes(32).toString('hex')
    await upsertDeclaredNode(ctx.pool, { id: nodeId, pool: 'bench' })
    await issueEnrollmentSecret(ctx.pool, nodeId, createHash('sha256').update(secret, 'utf8').digest(), new Date(Date.now() + 900_000))
    const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: `CN=${nodeId}`, keys: ctx.keys, signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' } as EcdsaParams })
    prepared[i] = { nodeId, secret, csrPem: csr.toString('pem') }
  })
  const latencies: number[] = []
  let refused = 0
  const client = new Agent({ keepAlive: true, maxSockets: 32, ca: ctx.caPem })
  const started = performance.now()
  await forEachLimit(prepared, 32, async (p) => {
    const t0 = performance.now()
    const reply = await post(client, ctx.enrollUrl, '/v1/enroll', { node_id: p.nodeId, enrollment_secret: p.secret, csr_pem: p.csrPem }, { ca: ctx.caPem })
    if (reply.status === 200) latencies.push(performance.now() - t0)
    else refused++
  })
  const elapsed = (performance.now() - started) / 1000
  client.destroy()
  latencies.sort((x, y) => x - y)
  return { count: latencies.length, perSecond: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), refused }
}

// ---------------------------------------------------------------------------------------------

interface BenchContext {
  pool: pg.Pool
  admin: pg.Client
  database: string
  enrollUrl: string
  agentUrl: string
  caPem: string
  keyPem: string
  keys: CryptoKeyPair
  publicKey: PublicKey
  ca: IssuingCa
}

interface Row {
  agents: number
  setupMs: number
  connect: ConnectResult
  sustain: SustainResult
  storm: ConnectResult
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2))
  const benchStarted = performance.now()
  const overBudget = () => (performance.now() - benchStarted) / 1000 > options.budgetSeconds
  const hardStop = setTimeout(() => {
    process.stderr.write(`bench: over the hard limit of ${options.budgetSeconds + 300} s, stopping\n`)
    process.exit(3)
  }, (options.budgetSeconds + 300) * 1000)
  hardStop.unref()

  const { startDisposablePostgres, freshDatabase } = await import('../test/support/postgres.js')
  const { initPki } = await import('../src/pki/init-pki.js')
  const { loadPkiSet } = await import('../src/pki/pki-set.js')
  const { generateP256KeyPair, privateKeyToPem } = await import('../src/pki/keys.js')
  const { x509 } = await import('../src/pki/x509-provider.js')

  const dir = await mkdtemp(join(tmpdir(), 'fleetkit-bench-gw-'))
  const postgres = await startDisposablePostgres()
  let gateway: ChildProcess | undefined
  let db: Awaited<ReturnType<typeof freshDatabase>> | undefined
  const admin = new pg.Client({ connectionString: postgres.url })
  const rows: Row[] = []
  const skipped: string[] = []
  let enroll: EnrollResult | undefined
  try {
    db = await freshDatabase(postgres.url)
    await admin.connect()
    const pkiDir = join(dir, 'pki')
    await initPki({ pkiDir, serverNames: ['127.0.0.1'], now: new Date() })
    const pki = await loadPkiSet(pkiDir, new Date())
    const started = await startGatewayProcess(db.url, pkiDir)
    gateway = started.child
    const keys = await generateP256KeyPair()
    const ctx: BenchContext = {
      pool: db.pool,
      admin,
      database: db.name,
      enrollUrl: started.enrollUrl,
      agentUrl: started.agentUrl,
      caPem: pki.bundlePem,
      keyPem: await privateKeyToPem(keys.privateKey),
      keys,
      publicKey: await x509.PublicKey.create(keys.publicKey),
      ca: pki.ca,
    }
    await writeFile(join(dir, 'ca.pem'), ctx.caPem)

    let lastPerAgentMs = 0
    for (const count of options.agents) {
      const remaining = options.budgetSeconds - (performance.now() - benchStarted) / 1000
      const estimate = (lastPerAgentMs * count) / 1000 + options.seconds + 2 * STATS_SETTLE_MS / 1000 + 30
      if (overBudget() || (lastPerAgentMs > 0 && estimate > remaining)) {
        skipped.push(`${count} agents skipped: an estimated ${Math.round(estimate)} s against ${Math.round(remaining)} s of budget left`)
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
      process.stdout.write(`enrollments: ${enroll.count} in ${(enroll.count / enroll.perSecond).toFixed(1)} s = ${enroll.perSecond.toFixed(0)}/s, p50 ${ms(enroll.p50)}, p99 ${ms(enroll.p99)}, refused ${enroll.refused}\n`)
    }
  } finally {
    if (gateway && gateway.exitCode === null) {
      const exited = new Promise((resolve) => gateway!.once('exit', resolve))
      gateway.kill('SIGTERM')
      await exited
    }
    await admin.end().catch(() => {})
    await db?.drop().catch(() => {})
    await postgres.stop()
    await rm(dir, { recursive: true, force: true })
  }
  if (options.docs && rows.length > 0) await appendToDocs(rows, enroll, skipped, options)
  clearTimeout(hardStop)
}

function printRow(row: Row, options: Options): void {
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

async function appendToDocs(rows: Row[], enroll: EnrollResult | undefined, skipped: string[], options: Options): Promise<void> {
  const path = packagePath('docs', 'performance.md')
  let existing: string
  try {
    existing = await readFile(path, 'utf8')
  } catch {
    existing = '# Performance\n\nFigures from the `bench/` scripts, each run on the CI machine kind (2 cores). None is a timed test.\n'
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
  if (enroll) lines.push('', `Enrollments through \`POST /v1/enroll\` (32 concurrent clients): ${enroll.count} at ${enroll.perSecond.toFixed(0)}/s, p50 ${ms(enroll.p50)}, p99 ${ms(enroll.p99)}, ${enroll.refused} refused.`)
  for (const line of skipped) lines.push('', `Not measured: ${line}.`)
  await appendFile(path, `${lines.join('\n')}\n`)
}

if (process.argv.includes('--serve')) await serve()
else await main()
