// `fleetkit gateway serve` as a library function: configuration from the environment,
// the database, the PKI set, the listeners; runs until a signal, then shuts down cleanly.
import type { Env } from '../config/state-dir.js'
import type { GatewayConfig } from './config.js'
import { formatBind, loadGatewayConfig } from './config.js'
import { ensureDescriptorBudget } from './tls/descriptor-limit.js'
import { DEFAULT_LOAD_SHEDDER_TUNING } from './load/load-shedder.js'
import { DEFAULT_TUNING } from './tuning.js'
import type { RunningGateway } from './gateway.js'
import type { GatewayOptions } from './gateway-types.js'
import type { GatewaySweep } from './sweeper.js'
import type { ReadinessFunction } from './routes/status-view.js'
import { createLogger, type Logger } from '../log/logger.js'
import { releasesDirOf } from '../release/releases-dir.js'

/** What the gateway's options take from its configuration: binds, PKI and releases directories, lifetimes and tuning. */
/** How long the gateway's statements wait for the database's answer (serve.ts: agents give up at 20 s). */
const GATEWAY_QUERY_TIMEOUT_MS = 15_000

export function gatewayOptionsFromConfig(
  config: GatewayConfig,
): Pick<
  GatewayOptions,
  | 'pkiDir'
  | 'enrollBind'
  | 'agentBind'
  | 'metricsBind'
  | 'agentCertLifetimeSeconds'
  | 'tuning'
  | 'recoveryWindowSeconds'
  | 'releasesDir'
> {
  return {
    pkiDir: config.pkiDir,
    releasesDir: releasesDirOf(config.stateDir),
    enrollBind: config.enrollBind,
    agentBind: config.agentBind,
    metricsBind: config.metricsBind,
    agentCertLifetimeSeconds: config.agentCertLifetimeSeconds,
    tuning: {
      enrollConnections: config.enrollConnections,
      agentConnections: config.agentConnections,
      loadShedding: {
        ...DEFAULT_LOAD_SHEDDER_TUNING,
        delayThresholdsMs: config.shedDelayThresholdsMs ?? [Infinity, Infinity, Infinity],
      },
      sweepLeaseMs: config.sweepLeaseSeconds * 1000,
    },
    recoveryWindowSeconds: config.recoveryWindowSeconds,
  }
}

export interface ServeResult {
  stoppedBy: string
}

export async function serveGateway(
  options: {
    env?: Env
    logger?: Logger
    signals?: NodeJS.Signals[]
    sweep?: GatewaySweep
    readiness?: ReadinessFunction
  } = {},
): Promise<ServeResult> {
  const env = options.env ?? process.env
  const logger = options.logger ?? createLogger({ component: 'gateway', env })
  const config: GatewayConfig = loadGatewayConfig(env)
  // Before anything opens a descriptor: the caps must fit under the limit, or a flood of idle
  // connections would starve the database pool and the PKI reload instead of being refused.
  ensureDescriptorBudget(
    {
      enrollConnections: config.enrollConnections.maxConnections,
      agentConnections: config.agentConnections.maxConnections,
      reserve: DEFAULT_TUNING.descriptorReserve,
    },
    { logger },
  )
  const { loadPkiSet } = await import('../pki/pki-set.js')
  const { openDatabase } = await import('../store/database.js')
  const { startGateway } = await import('./gateway.js')
  const { ensureEmbeddedServer, livePostmasterPid } = await import('../store/embedded/server.js')
  // The PKI is checked first: a refused key must not wait for a database to start.
  const pki = await loadPkiSet(config.pkiDir, new Date())
  // A request waits at most 3 s for a pooled connection, then gets 503 STATE_UNAVAILABLE; a statement the
  // server does not answer within 15 s (agents give up at 20 s) fails as a lost connection, also a 503, and its
  // connection is dropped, so a database that went silent cannot hold the pool for the kernel's 15 minutes.
  const database = await openDatabase({
    databaseUrl: config.databaseUrl ?? '',
    stateDir: config.stateDir,
    env,
    connectionTimeoutMs: 3000,
    queryTimeoutMs: GATEWAY_QUERY_TIMEOUT_MS,
    onIdleError: (error) => logger('warn', 'database_connection_dropped', { error: error.message }),
  })
  let gateway: RunningGateway
  try {
    gateway = await startGateway({
      ...gatewayOptionsFromConfig(config),
      pool: database.pool,
      pki,
      logger,
      // The embedded default is this machine's own server: when it dies (its postmaster is gone, not
      // merely slow to answer), the gateway starts it again.
      ...(database.source === 'embedded'
        ? {
            archiveStateDir: config.stateDir,
            embeddedDatabase: {
              livePostmaster: () => livePostmasterPid(config.stateDir),
              restart: async () => {
                await ensureEmbeddedServer(config.stateDir)
              },
            },
          }
        : {}),
      ...(options.sweep ? { sweep: options.sweep } : {}),
      ...(options.readiness ? { readiness: options.readiness } : {}),
    })
  } catch (error) {
    await database.close()
    throw error
  }
  logger('info', 'listening', { listener: 'enroll', address: formatBind(gateway.enrollAddress) })
  logger('info', 'listening', { listener: 'agent', address: formatBind(gateway.agentAddress) })
  if (gateway.metricsAddress)
    logger('info', 'listening', { listener: 'metrics', address: formatBind(gateway.metricsAddress) })
  logger('info', 'gateway_ready', {
    database: database.url,
    pki_dir: config.pkiDir,
    releases_dir: releasesDirOf(config.stateDir),
    ca_sha256: pki.ca.fingerprintSha256,
    agent_cert_lifetime_seconds: config.agentCertLifetimeSeconds,
    agent_renew_check_seconds: config.agentRenewCheckSeconds,
  })
  const signals = options.signals ?? ['SIGTERM', 'SIGINT']
  const stoppedBy = await new Promise<string>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      for (const s of signals) process.off(s, onSignal)
      resolve(signal)
    }
    for (const s of signals) process.on(s, onSignal)
  })
  logger('info', 'shutting_down', { signal: stoppedBy })
  await gateway.close()
  // The pool's end waits for every checked-out connection: bounded, so a statement stuck on a silent server
  // cannot keep the gateway from stopping (its process then exits by itself: the exit_forced guard).
  const closed = await Promise.race([
    database.close().then(() => true),
    new Promise<false>((resolve) => setTimeout(() => resolve(false), 5000).unref()),
  ])
  logger('info', 'stopped', { signal: stoppedBy, ...(closed ? {} : { database_connections_left: true }) })
  return { stoppedBy }
}
