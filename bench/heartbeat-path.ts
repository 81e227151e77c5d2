// The keep-alive heartbeat's JavaScript in one process, without sockets, TLS or a second process:
// the gateway's request handler and the ratio bench's bare handler each answer the same request,
// on node:http's own IncomingMessage and ServerResponse over a socket that discards what it is sent,
// in alternating blocks. What it prints is each handler's time per request and the difference: the
// work the gateway's request path adds, at a precision the ratio bench (±0.07x between runs) cannot give.
//
//   npx tsx bench/heartbeat-path.ts [--requests 200000] [--rounds 6] [--other-streams tcp,http,file,memory,worker,pg]
//
// --other-streams first puts those kinds of stream through this process (gateway/other-streams.ts), as a
// gateway process has them (PostgreSQL's sockets, the metrics listener, release files): node's shared
// stream internals then see more shapes, which costs both handlers alike.
//
// The body arrives as it does on a real connection (after the request event has returned, then the end
// of the message), and the certificate's row is in the auth cache, as for a connected agent.
import { IncomingMessage, ServerResponse } from 'node:http'
import { performance, PerformanceObserver } from 'node:perf_hooks'
import { Duplex } from 'node:stream'

import { systemClock } from '../src/config/clock.js'
import { silentLogger } from '../src/log/logger.js'
import { AgentAuthenticator } from '../src/gateway/auth/agent-auth.js'
import { DriftTracker } from '../src/gateway/drift/drift-tracker.js'
import { DatabaseHealth } from '../src/gateway/load/database-health.js'
import { HeartbeatCoalescer } from '../src/gateway/load/heartbeat-coalescer.js'
import { DEFAULT_LOAD_SHEDDER_TUNING, LoadShedder } from '../src/gateway/load/load-shedder.js'
import { GatewayMetrics } from '../src/gateway/metrics/metrics.js'
import { agentRoutes } from '../src/gateway/routes/agent-routes.js'
import type { GatewayContext } from '../src/gateway/routes/gateway-context.js'
import { requestHandler } from '../src/gateway/routes/request-handler.js'
import { Router } from '../src/gateway/routes/router.js'
import { bareHandler } from './gateway/bare-handler.js'
import { flag } from './gateway/flags.js'
import { runOtherStreams, streamKindsOf } from './gateway/other-streams.js'
import { FACTS } from './gateway/ratio-measure.js'

const requests = flag('requests', 200_000, 1000, 10_000_000)
const rounds = flag('rounds', 6, 1, 100)
const streamsAt = process.argv.indexOf('--other-streams')
const otherStreams = streamsAt >= 0 ? streamKindsOf(process.argv[streamsAt + 1] ?? '') : []

const FINGERPRINT = 'ab'.repeat(32)
const CA_FINGERPRINT = 'cd'.repeat(32)
const BODY = Buffer.from(JSON.stringify({ facts: FACTS }))

/** A connection that takes whatever is written and drops it; it presents the agent's certificate. */
class NullSocket extends Duplex {
  readonly authorized = true
  readonly remoteAddress = '127.0.0.1'
  override _read(): void {}
  override _write(_chunk: unknown, _encoding: string, callback: () => void): void {
    callback()
  }
  override _writev(_chunks: unknown, callback: () => void): void {
    callback()
  }
  getPeerX509Certificate() {
    return { fingerprint256: FINGERPRINT.match(/../g)!.join(':').toUpperCase() }
  }
  setTimeout(): this {
    return this
  }
}

function gatewayContext(): GatewayContext {
  const auth = new AgentAuthenticator({ pool: undefined as never, cacheMs: 3_600_000 })
  const now = new Date()
  ;(auth as unknown as { remember(c: unknown): void }).remember({
    id: '1',
    nodeId: 'build-1',
    fingerprintSha256: FINGERPRINT,
    serial: '01',
    notBefore: new Date(now.getTime() - 3_600_000),
    notAfter: new Date(now.getTime() + 86_400_000),
    issuerCaSha256: CA_FINGERPRINT,
    purpose: 'agent',
    replacesId: null,
    firstUsedAt: now,
    revokedAt: null,
    createdAt: now,
    nodeStatus: 'active',
  })
  const pki = {
    ca: { fingerprintSha256: CA_FINGERPRINT },
    bundlePem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
  }
  return {
    pool: undefined as never,
    database: new DatabaseHealth({ probe: async () => undefined, intervalMs: 2000, logger: silentLogger }),
    clock: systemClock,
    logger: silentLogger,
    metrics: new GatewayMetrics(),
    lifecycleMetrics: undefined as never,
    pki: () => pki as never,
    agentCertLifetimeSeconds: 86_400,
    recoveryWindowSeconds: 0,
    jobLeaseSeconds: 60,
    coalescer: new HeartbeatCoalescer({ write: async () => undefined }),
    drift: new DriftTracker({ pool: undefined as never, logger: silentLogger, reloadMs: { inSync: 1, notInSync: 1 } }),
    auth,
    enrollLimiter: undefined as never,
    renewLimiter: undefined as never,
    issuer: undefined as never,
    shedder: new LoadShedder({ tuning: DEFAULT_LOAD_SHEDDER_TUNING, delayMs: () => 0 }),
  }
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void

/** One request as a connection delivers it: the request event, then (a callback later) its body and end. */
function once(handler: Handler, socket: NullSocket): Promise<number> {
  const req = new IncomingMessage(socket as never)
  req.method = 'POST'
  req.url = '/v1/agent/heartbeat'
  req.headers = { 'content-type': 'application/json', 'content-length': String(BODY.length), host: '127.0.0.1' }
  const res = new ServerResponse(req)
  res.shouldKeepAlive = true
  res.assignSocket(socket as never)
  const done = new Promise<number>((resolve) =>
    res.once('finish', () => {
      res.detachSocket(socket as never)
      resolve(res.statusCode)
    }),
  )
  handler(req, res)
  return Promise.resolve().then(() => {
    req.push(BODY)
    req.complete = true
    req.push(null)
    return done
  })
}

// Garbage collections, attributed afterwards to the block they began in: what each handler's allocations cost.
const collections: { start: number; ms: number }[] = []
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) collections.push({ start: entry.startTime, ms: entry.duration })
}).observe({ entryTypes: ['gc'] })

interface Block {
  from: number
  to: number
  n: number
}

async function block(handler: Handler, n: number): Promise<Block> {
  const socket = new NullSocket()
  const from = performance.now()
  for (let i = 0; i < n; i++) {
    const status = await once(handler, socket)
    if (status !== 200) throw new Error(`answered ${status}`)
  }
  return { from, to: performance.now(), n }
}

const microsEach = (b: Block) => ((b.to - b.from) * 1000) / b.n
/** GC per request over the blocks: collections begun inside them, in µs, and how many per 10,000 requests. */
function gcOf(blocks: Block[]): { micros: number; per10k: number } {
  const n = blocks.reduce((sum, b) => sum + b.n, 0)
  const inside = collections.filter((c) => blocks.some((b) => c.start >= b.from && c.start < b.to))
  return {
    micros: (inside.reduce((sum, c) => sum + c.ms, 0) * 1000) / n,
    per10k: (inside.length * 10_000) / n,
  }
}

if (otherStreams.length > 0) await runOtherStreams(otherStreams)
const g = gatewayContext()
const gateway = requestHandler('agent', new Router(agentRoutes(g)), g)
const bare = bareHandler(CA_FINGERPRINT)
// Warm both up (the JIT, the caches), then alternate.
await block(bare, 20_000)
await block(gateway, 20_000)
const bareBlocks: Block[] = []
const fleetkitBlocks: Block[] = []
for (let r = 0; r < rounds; r++) {
  bareBlocks.push(await block(bare, requests / rounds))
  fleetkitBlocks.push(await block(gateway, requests / rounds))
}
await new Promise((resolve) => setTimeout(resolve, 100)) // the observer is told after the blocks
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const b = median(bareBlocks.map(microsEach))
const f = median(fleetkitBlocks.map(microsEach))
const bareGc = gcOf(bareBlocks)
const fleetkitGc = gcOf(fleetkitBlocks)
process.stdout.write(
  `${requests} requests each in ${rounds} alternating rounds${otherStreams.length > 0 ? ` after other streams (${otherStreams.join(', ')})` : ''} (medians): bare handler ${b.toFixed(2)} µs, gateway handler ${f.toFixed(2)} µs, the gateway adds ${(f - b).toFixed(2)} µs per heartbeat\n` +
    `garbage collection per request (in those times): bare ${bareGc.micros.toFixed(2)} µs (${bareGc.per10k.toFixed(1)} collections per 10,000), gateway ${fleetkitGc.micros.toFixed(2)} µs (${fleetkitGc.per10k.toFixed(1)} per 10,000)\n`,
)
