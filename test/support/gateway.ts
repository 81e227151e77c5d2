// A real gateway for tests, against a fresh database and an ephemeral CA (no committed keys).
//
// API (the agent's tests reuse it):
//   const pg = await startDisposablePostgres()                 // from ./postgres.js, once per suite
//   const gw = await startTestGateway({ postgresUrl: pg.url })  // in this process (default)
//   const gw = await startTestGateway({ postgresUrl: pg.url, mode: 'process' })  // `node bin/dev.js gateway serve`
//   gw.enrollUrl, gw.agentUrl, gw.metricsUrl   https://127.0.0.1:PORT (metrics: http://)
//   gw.pkiDir, gw.caPem (the trust bundle), gw.db ({url, pool, drop}: a fresh migrated database)
//   gw.stateDir                                      // the gateway's state directory (not created): it serves <stateDir>/releases
//   await gw.declareNode('node-1')                  // a node row (status parked)
//   const secret = await gw.issueSecret('node-1')   // a single-use secret (hash stored), node provisioning
//   const id = await gw.enroll('node-1', secret)    // P-256 key + CSR, POST /v1/enroll -> {keyPem, certificatePem, caPem, notAfter}
//   await gw.agent(id, 'POST', '/v1/agent/heartbeat', { facts: {...} })  // mTLS -> {status, body, headers}
//   await gw.enrollPost({ node_id, enrollment_secret, csr_pem })       // raw enrollment -> {status, body, headers}
//   await gw.flushHeartbeats()                      // in-process only: write pending heartbeats now
//   gw.clock                                        // in-process: the gateway's clock (pass `clock` to inject one)
//   gw.logs                                         // process mode: stdout JSON lines so far
//   gw.stderr                                       // process mode: stderr chunks so far
//   await gw.close()                                // stops the gateway, drops the database, removes the PKI dir
// Options: agentCertLifetimeSeconds, clock, tuning (in-process), eventLoopDelayMs (in-process), env (extra env, process mode), serverNames,
// pool (in-process: a pool of your own on the fresh database, given db), shared (another gateway's db and PKI),
// crashAfterEnrollCommit (process mode: a gateway that dies right after an enrollment committed).
import 'reflect-metadata'
import type pg from 'pg'
import type { ChildProcess } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { request as httpsRequest } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

import { systemClock, type Clock } from '../../src/config/clock.js'
import type { GatewayWithControls } from '../../src/gateway/controls.js'
import type { GatewayTuning } from '../../src/gateway/gateway.js'
import type { GatewaySweep } from '../../src/gateway/sweeper.js'
import { DEFAULT_LOAD_SHEDDER_TUNING } from '../../src/gateway/load/load-shedder.js'
import { runSweep } from '../../src/lifecycle/node/sweep.js'
import { stateReadiness } from '../../src/lifecycle/view/fleet-ready.js'
import { DEFAULT_THRESHOLDS } from '../../src/lifecycle/node/thresholds.js'
import { silentLogger } from '../../src/log/logger.js'
import { packagePath } from '../../src/package-root.js'
import { initPki } from '../../src/pki/init-pki.js'
import { loadPkiSet } from '../../src/pki/pki-set.js'
import { issueEnrollmentSecret } from '../../src/store/nodes/enrollment-secrets.js'
import { upsertDeclaredNode } from '../../src/store/nodes/nodes.js'
import { fleetkitEntry } from './cli.js'
import { eventually } from './eventually.js'
import { makeCsr, nodeKey } from './pki.js'
import { freshDatabase, type FreshDatabase } from './postgres.js'
import { startProcess } from './process.js'

export interface AgentIdentityFiles {
  nodeId: string
  keyPem: string
  certificatePem: string
  caPem: string
  notAfter: string
}

export interface HttpReply {
  status: number
  body: Record<string, unknown>
  headers: Record<string, string | string[] | undefined>
}

export interface TestGateway {
  mode: 'in-process' | 'process'
  enrollUrl: string
  agentUrl: string
  metricsUrl: string
  pkiDir: string
  caPem: string
  /** The gateway's state directory (FLEETKIT_STATE_DIR; not created): `fleetkit release publish` there, and it serves the release. */
  stateDir: string
  db: FreshDatabase
  clock: Clock
  /** In-process: the gateway with its controls (src/gateway/controls.ts): run a timer's work now, read its state. */
  gateway?: GatewayWithControls
  child?: ChildProcess
  logs: string[]
  /** Process mode: what the gateway wrote on stderr so far. */
  stderr: string[]
  declareNode(id: string, options?: { pool?: string }): Promise<void>
  issueSecret(nodeId: string, options?: { ttlSeconds?: number; now?: Date }): Promise<string>
  enroll(nodeId: string, secret: string): Promise<AgentIdentityFiles>
  enrollPost(body: unknown): Promise<HttpReply>
  agent(
    identity: { keyPem: string; certificatePem: string } | undefined,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<HttpReply>
  flushHeartbeats(): Promise<void>
  close(): Promise<void>
}

export interface TestGatewayOptions {
  postgresUrl: string
  mode?: 'in-process' | 'process'
  agentCertLifetimeSeconds?: number
  clock?: Clock
  tuning?: Partial<GatewayTuning>
  /** In-process: the sweep the gateway runs (default: runSweep with the default thresholds); null for none. */
  sweep?: GatewaySweep | null
  env?: Record<string, string>
  serverNames?: string[]
  /** In-process: the pool the gateway uses instead of the fresh database's (a small one for exhaustion tests). */
  pool?: (db: FreshDatabase) => pg.Pool
  /** A state directory whose off-host archive shipping the gateway's gauges read (in-process mode). */
  archiveStateDir?: string
  /** Process mode: a command the gateway runs under, e.g. ['prlimit', '--nofile=1024:1024', '--']. */
  wrapper?: string[]
  /**
   * Process mode: run test/support/crashing-gateway.ts instead of `fleetkit gateway serve`, a gateway
   * that dies (SIGKILL) right after an enrollment committed, before its answer is sent.
   */
  crashAfterEnrollCommit?: boolean
  /** In-process: the overload signal (event-loop delay, ms) the gateway's load shedder samples. */
  eventLoopDelayMs?: () => number
  /** Serve the database and PKI directory of this gateway (a second gateway, or one after a crash); close() leaves them. */
  shared?: TestGateway
}

/** Generous limits: tests of other rules must not trip the rate limiter by accident. */
export const TEST_TUNING: Partial<GatewayTuning> = {
  authCacheMs: 0,
  heartbeatFlushMs: 200,
  enrollRate: { perSource: { burst: 1000, perSecond: 1000 }, global: { burst: 1000, perSecond: 1000 } },
  renewRate: { perSource: { burst: 1000, perSecond: 1000 }, global: { burst: 1000, perSecond: 1000 } },
  // An in-process gateway shares its event loop with the test (key generation, 50 clients at once): its
  // delay is the test's, not the gateway's. The load-shedding suite injects the signal it tests.
  loadShedding: { ...DEFAULT_LOAD_SHEDDER_TUNING, delayThresholdsMs: [Infinity, Infinity, Infinity] },
  // The same event loop also delays handshakes: 50 at once beside key generation on a loaded machine
  // can take more than the enrollment listener's 5 s. The deadline's own suite sets its own.
  handshakeTimeoutMs: { enroll: 60_000, agent: 60_000 },
}

export async function startTestGateway(options: TestGatewayOptions): Promise<TestGateway> {
  const mode = options.mode ?? 'in-process'
  const clock = options.clock ?? systemClock
  const dir = await mkdtemp(join(tmpdir(), 'fleetkit-gw-'))
  const pkiDir = options.shared?.pkiDir ?? join(dir, 'pki')
  const stateDir = options.shared?.stateDir ?? join(dir, 'state')
  if (!options.shared)
    await initPki({ pkiDir, serverNames: options.serverNames ?? ['localhost', '127.0.0.1'], now: new Date() })
  const caPem = await readFile(join(pkiDir, 'ca-bundle.pem'), 'utf8')
  const db = options.shared?.db ?? (await freshDatabase(options.postgresUrl))
  const dropDb = () => (options.shared ? Promise.resolve() : db.drop())
  const lifetime = options.agentCertLifetimeSeconds ?? 86400
  const logs: string[] = []
  const stderr: string[] = []
  let gateway: GatewayWithControls | undefined
  let child: ChildProcess | undefined
  let ports: { enroll: number; agent: number; metrics: number }
  try {
    if (mode === 'in-process') {
      const { startGatewayWithControls } = await import('../../src/gateway/gateway.js')
      const any = { host: '127.0.0.1', port: 0 }
      gateway = await startGatewayWithControls(
        {
          pool: options.pool?.(db) ?? db.pool,
          pki: await loadPkiSet(pkiDir, clock.now()),
          pkiDir,
          enrollBind: any,
          agentBind: any,
          metricsBind: any,
          agentCertLifetimeSeconds: lifetime,
          releasesDir: join(stateDir, 'releases'),
          clock,
          logger: silentLogger,
          tuning: { ...TEST_TUNING, ...options.tuning },
          ...(options.sweep === null
            ? {}
            : {
                sweep: options.sweep ?? {
                  run: (pool) => runSweep(pool, DEFAULT_THRESHOLDS),
                  thresholds: DEFAULT_THRESHOLDS,
                },
              }),
          // The status page's verdict, as `fleetkit gateway serve` gives it.
          readiness: stateReadiness,
          ...(options.archiveStateDir ? { archiveStateDir: options.archiveStateDir } : {}),
        },
        options.eventLoopDelayMs ? { eventLoopDelayMs: options.eventLoopDelayMs } : {},
      )
      ports = {
        enroll: gateway.enrollAddress.port,
        agent: gateway.agentAddress.port,
        metrics: gateway.metricsAddress!.port,
      }
    } else {
      const started = await spawnGateway(
        {
          ...process.env,
          DATABASE_URL: db.url,
          FLEETKIT_STATE_DIR: stateDir,
          FLEETKIT_PKI_DIR: pkiDir,
          FLEETKIT_ENROLL_BIND: '127.0.0.1:0',
          FLEETKIT_AGENT_BIND: '127.0.0.1:0',
          FLEETKIT_METRICS_BIND: '127.0.0.1:0',
          FLEETKIT_AGENT_CERT_LIFETIME_SECONDS: String(lifetime),
          FLEETKIT_AGENT_RENEW_CHECK_SECONDS: String(Math.max(1, Math.min(600, Math.floor(lifetime / 3)))),
          // Every line, routine traffic included: the secret-leak search must see what debug would show.
          FLEETKIT_LOG_LEVEL: 'debug',
          // The test machine is shared: its load is not this gateway's (the load-shedding suite injects the signal).
          FLEETKIT_SHED_EVENT_LOOP_DELAY_MS: '0',
          ...options.env,
        },
        logs,
        stderr,
        [
          ...(options.wrapper ?? []),
          process.execPath,
          ...(options.crashAfterEnrollCommit
            ? ['--import', 'tsx', packagePath('test', 'support', 'crashing-gateway.ts')]
            : [fleetkitEntry(), 'gateway', 'serve']),
        ],
      )
      child = started.child
      ports = started.ports
    }
  } catch (error) {
    await dropDb()
    await rm(dir, { recursive: true, force: true })
    throw error
  }
  const enrollUrl = `https://127.0.0.1:${ports.enroll}`
  const agentUrl = `https://127.0.0.1:${ports.agent}`

  const tg: TestGateway = {
    mode,
    enrollUrl,
    agentUrl,
    metricsUrl: `http://127.0.0.1:${ports.metrics}`,
    pkiDir,
    caPem,
    stateDir,
    db,
    clock,
    gateway,
    child,
    logs,
    stderr,
    async declareNode(id, node = {}) {
      await upsertDeclaredNode(db.pool, { id, pool: node.pool ?? 'workers' })
    },
    async issueSecret(nodeId, secretOptions = {}) {
      const secret = randomBytes(32).toString('hex')
      const now = secretOptions.now ?? clock.now()
      const expires = new Date(now.getTime() + (secretOptions.ttlSeconds ?? 900) * 1000)
      await issueEnrollmentSecret(db.pool, nodeId, createHash('sha256').update(secret, 'utf8').digest(), expires)
      return secret
    },
    async enroll(nodeId, secret) {
      const key = await nodeKey()
      const reply = await tg.enrollPost({
        node_id: nodeId,
        enrollment_secret: secret,
        csr_pem: await makeCsr(key, { name: `CN=${nodeId}` }),
      })
      if (reply.status !== 200)
        throw new Error(`enrollment of ${nodeId} failed: ${reply.status} ${JSON.stringify(reply.body)}`)
      return {
        nodeId,
        keyPem: key.privateKeyPem,
        certificatePem: reply.body.certificate_pem as string,
        caPem: reply.body.ca_pem as string,
        notAfter: reply.body.not_after as string,
      }
    },
    enrollPost: (body) => httpsJson(enrollUrl, 'POST', '/v1/enroll', body, { ca: caPem }),
    agent: (identity, method, path, body) =>
      httpsJson(agentUrl, method, path, body, {
        ca: caPem,
        ...(identity ? { key: identity.keyPem, cert: identity.certificatePem } : {}),
      }),
    async flushHeartbeats() {
      if (!gateway) throw new Error('flushHeartbeats works in-process only')
      await gateway.flushHeartbeats()
    },
    async close() {
      if (gateway) await gateway.close()
      if (child && child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child!.once('exit', resolve))
        child.kill('SIGTERM')
        await exited
      }
      await dropDb()
      await rm(dir, { recursive: true, force: true })
    },
  }
  return tg
}

/** One JSON request over HTTPS (a fresh connection each time); TLS failures reject. */
export function httpsJson(
  base: string,
  method: string,
  path: string,
  body: unknown,
  tls: { ca: string; key?: string; cert?: string },
): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
    const req = httpsRequest(
      new URL(path, base),
      {
        method,
        ca: tls.ca,
        key: tls.key,
        cert: tls.cert,
        agent: false,
        headers:
          text === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8')
          let parsed: Record<string, unknown>
          try {
            parsed = JSON.parse(raw)
          } catch {
            parsed = { raw }
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, headers: res.headers })
        })
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(text)
  })
}

async function spawnGateway(
  env: NodeJS.ProcessEnv,
  logs: string[],
  stderr: string[],
  command: string[],
): Promise<{ child: ChildProcess; ports: { enroll: number; agent: number; metrics: number } }> {
  const gateway = startProcess(command[0]!, command.slice(1), { env, cwd: packagePath() })
  gateway.child.stderr!.on('data', (c: Buffer) => stderr.push(c.toString()))
  const ports: Partial<Record<'enroll' | 'agent' | 'metrics', number>> = {}
  let ready = false
  createInterface({ input: gateway.child.stdout! }).on('line', (line) => {
    logs.push(line)
    let entry: { msg?: string; listener?: 'enroll' | 'agent' | 'metrics'; address?: string }
    try {
      entry = JSON.parse(line)
    } catch {
      return
    }
    if (entry.msg === 'listening' && entry.listener && entry.address)
      ports[entry.listener] = Number(entry.address.split(':').pop())
    if (entry.msg === 'gateway_ready') ready = true
  })
  try {
    await eventually('the gateway to be ready', () => ready, {
      timeoutMs: 60_000,
      intervalMs: 20,
      stop: () => (gateway.exit() ? `the gateway exited with ${gateway.exit()!.code}` : undefined),
    })
  } catch (error) {
    await gateway.stop('SIGKILL')
    throw new Error(`${(error as Error).message}: ${stderr.join('')}${logs.join('\n')}`, { cause: error })
  }
  return { child: gateway.child, ports: ports as { enroll: number; agent: number; metrics: number } }
}
