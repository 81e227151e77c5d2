// The simulated agents of the gateway bench: a fleet enrolled through the store and the PKI, each
// agent on its own keep-alive mTLS connection, and the loads it puts on the gateway (connect, sustain, enroll).
import { createHash, randomBytes } from 'node:crypto'
import { Agent, request as httpsRequest } from 'node:https'
import { performance } from 'node:perf_hooks'

import type { PublicKey } from '@peculiar/x509'
import type pg from 'pg'

import type { IssuingCa } from '../../src/pki/certificate-authority.js'

export interface BenchContext {
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

export async function forEachLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
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

interface Reply {
  status: number
  body: string
}

export function post(
  agent: Agent | undefined,
  base: string,
  path: string,
  body: unknown,
  tls: { ca: string },
): Promise<Reply> {
  const text = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      new URL(path, base),
      {
        method: 'POST',
        agent,
        ca: tls.ca,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
        timeout: 120_000,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
        res.on('error', reject)
      },
    )
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', reject)
    req.end(text)
  })
}

/** xact_commit of the database, and the server's transaction-ID counter (advances once per write transaction). */
async function databaseCounters(admin: pg.Client, database: string): Promise<{ xactCommit: number; xid: number }> {
  const stats = await admin.query<{ xact_commit: string }>(
    'SELECT xact_commit FROM pg_stat_database WHERE datname = $1',
    [database],
  )
  const xid = await admin.query<{ xid: string }>('SELECT txid_current()::text AS xid')
  return { xactCommit: Number(stats.rows[0]!.xact_commit), xid: Number(xid.rows[0]!.xid) }
}

/** Shared-memory statistics reach pg_stat_database up to ~10 s after an idle backend's commit: wait that out. */
export const STATS_SETTLE_MS = 11_000

export interface SimulatedAgent {
  nodeId: string
  certificatePem: string
  agent: Agent
}

export interface Fleet {
  agents: SimulatedAgent[]
  setupMs: number
}

export async function buildFleet(count: number, prefix: string, ctx: BenchContext): Promise<Fleet> {
  const started = performance.now()
  const { upsertDeclaredNode, setNodeStatus } = await import('../../src/store/nodes/nodes.js')
  const { insertNodeCertificate } = await import('../../src/store/pki/certificates.js')
  const { issueClientCertificate } = await import('../../src/pki/client-certificate.js')
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(5, '0')}`)
  const certificates: string[] = new Array(count)
  await forEachLimit(ids, 16, async (nodeId, i) => {
    await upsertDeclaredNode(ctx.pool, { id: nodeId, pool: 'bench' })
    await setNodeStatus(ctx.pool, nodeId, 'active')
    const now = new Date()
    const issued = await issueClientCertificate({
      ca: ctx.ca,
      subjectPublicKey: ctx.publicKey,
      nodeId,
      now,
      lifetimeSeconds: 86400,
    })
    await insertNodeCertificate(ctx.pool, {
      nodeId,
      fingerprintSha256: issued.fingerprintSha256,
      serial: issued.serial,
      notBefore: issued.notBefore,
      notAfter: issued.notAfter,
      issuerCaSha256: issued.issuerCaSha256,
      now,
    })
    certificates[i] = issued.certificatePem
  })
  const agents = ids.map((nodeId, i) => ({
    nodeId,
    certificatePem: certificates[i]!,
    agent: newClient(ctx, certificates[i]!),
  }))
  return { agents, setupMs: performance.now() - started }
}

export function newClient(ctx: BenchContext, certificatePem: string): Agent {
  return new Agent({ keepAlive: true, maxSockets: 1, key: ctx.keyPem, cert: certificatePem, ca: ctx.caPem })
}

const FACTS = {
  cpu_count: 8,
  memory_mb: 32000,
  data_disk_free_gb: 400,
  kernel: '6.8.0-45-generic',
  docker_version: '27.3.1',
  agent_version: '0.1.0',
  bridge_netfilter: true,
  clock_skew_ms: 3,
}

async function heartbeat(ctx: BenchContext, agent: Agent): Promise<number> {
  const start = performance.now()
  const reply = await post(agent, ctx.agentUrl, '/v1/agent/heartbeat', { facts: FACTS }, { ca: ctx.caPem })
  if (reply.status !== 200) throw new Error(`heartbeat answered ${reply.status}: ${reply.body.slice(0, 200)}`)
  return performance.now() - start
}

export interface ConnectResult {
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

/** Every agent sends one heartbeat at the same moment (new connections: full TLS handshakes). */
export async function connectAll(ctx: BenchContext, agents: SimulatedAgent[]): Promise<ConnectResult> {
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
  return {
    count: agents.length,
    wallMs,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
    reasons,
  }
}

export interface SustainResult {
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
export async function sustain(
  ctx: BenchContext,
  agents: SimulatedAgent[],
  seconds: number,
  intervalMs: number,
): Promise<SustainResult> {
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

export interface EnrollResult {
  /** Answers other than 200, by status (429 rate limited, 503 shed). */
  refusedByStatus?: Record<string, number>
  count: number
  perSecond: number
  p50: number
  p99: number
  refused: number
}

/** Real POST /v1/enroll: CSR check, one conditional UPDATE, issuance, insert, event. 32 clients at once. */
export async function enrollments(ctx: BenchContext, count: number): Promise<EnrollResult> {
  const { upsertDeclaredNode } = await import('../../src/store/nodes/nodes.js')
  const { issueEnrollmentSecret } = await import('../../src/store/nodes/enrollment-secrets.js')
  const { x509 } = await import('../../src/pki/x509-provider.js')
  const ids = Array.from({ length: count }, (_, i) => `bench-enroll-${String(i).padStart(5, '0')}`)
  const prepared: { nodeId: string; secret: string; csrPem: string }[] = new Array(count)
  await forEachLimit(ids, 16, async (nodeId, i) => {
    const secret = randomBytes(32).toString('hex')
    await upsertDeclaredNode(ctx.pool, { id: nodeId, pool: 'bench' })
    await issueEnrollmentSecret(
      ctx.pool,
      nodeId,
      createHash('sha256').update(secret, 'utf8').digest(),
      new Date(Date.now() + 900_000),
    )
    const csr = await x509.Pkcs10CertificateRequestGenerator.create({
      name: `CN=${nodeId}`,
      keys: ctx.keys,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' } as EcdsaParams,
    })
    prepared[i] = { nodeId, secret, csrPem: csr.toString('pem') }
  })
  const latencies: number[] = []
  let refused = 0
  const refusedByStatus: Record<string, number> = {}
  const client = new Agent({ keepAlive: true, maxSockets: 32, ca: ctx.caPem })
  const started = performance.now()
  await forEachLimit(prepared, 32, async (p) => {
    const t0 = performance.now()
    const reply = await post(
      client,
      ctx.enrollUrl,
      '/v1/enroll',
      { node_id: p.nodeId, enrollment_secret: p.secret, csr_pem: p.csrPem },
      { ca: ctx.caPem },
    )
    if (reply.status === 200) latencies.push(performance.now() - t0)
    else {
      refused++
      refusedByStatus[reply.status] = (refusedByStatus[reply.status] ?? 0) + 1
    }
  })
  const elapsed = (performance.now() - started) / 1000
  client.destroy()
  latencies.sort((x, y) => x - y)
  return {
    count: latencies.length,
    perSecond: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    refused,
    refusedByStatus,
  }
}
