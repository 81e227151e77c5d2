// The running gateway: the enrollment listener (server-auth TLS; it also serves published releases), the agent listener
// (mTLS + certificate rows), the loopback metrics listener, the heartbeat coalescer,
// and a graceful close that stops listening, drains requests and flushes heartbeats. The product
// and the benches hold only its addresses and close (startGateway); tests the controls too.
import { createServer as createHttpServer, type Server } from 'node:http'
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https'

import { systemClock } from '../config/clock.js'
import type { PkiSet } from '../pki/pki-set.js'
import { liveIssuerFingerprints } from '../store/pki/ca-rotations.js'
import { recordHeartbeats } from '../store/nodes/heartbeats.js'
import { AgentAuthenticator } from './auth/agent-auth.js'
import { agentRoutes } from './routes/agent-routes.js'
import { clientAuthOf, closeServer, listen, tlsOf } from './tls/listeners.js'
import { enrollRoutes } from './routes/enroll-route.js'
import type { GatewayContext } from './routes/gateway-context.js'
import { HeartbeatCoalescer } from './load/heartbeat-coalescer.js'
import { DriftTracker } from './drift/drift-tracker.js'
import { errorText, requestHandler, serveMetrics } from './routes/request-handler.js'
import { createLogger } from '../log/logger.js'
import { LifecycleMetrics } from './metrics/lifecycle-metrics.js'
import { GatewayMetrics } from './metrics/metrics.js'
import { registerPkiGauges } from './metrics/pki-metrics.js'
import { registerReconcileGauges } from './metrics/reconcile-metrics.js'
import { registerSyncGauges } from './metrics/sync-metrics.js'
import { registerDriftGauges } from './metrics/drift-metrics.js'
import { registerArchiveGauges } from './metrics/archive-metrics.js'
import { DatabaseHealth } from './load/database-health.js'
import { AuthCacheKeeper } from './auth/auth-cache.js'
import { TicketKeyKeeper } from './tls/ticket-keys.js'
import { limitConnections } from './tls/connection-limits.js'
import { guardPool, readsWhileUp } from '../store/state-guard.js'
import { IssuancePool } from './issuance/issuance-pool.js'
import { LoadShedder, logLevelChange } from './load/load-shedder.js'
import { DEFAULT_TUNING } from './tuning.js'
import type { GatewayOptions, RunningGateway } from './gateway-types.js'
import type { GatewayHooks, GatewayWithControls } from './controls.js'
import { DatabaseProbe } from '../store/probe.js'
import { OPERATOR_PREFIX, operatorRoutes } from './routes/operator-routes.js'
import { PkiReloader } from './tls/pki-reloader.js'
import { DEFAULT_RECOVERY_WINDOW_SECONDS, recoverRoutes } from './routes/recover-route.js'
import { releaseRoutes } from './routes/release-routes.js'
import { Router } from './routes/router.js'
import { RateLimiter } from './load/token-bucket.js'
import { Sweeper } from './sweeper.js'

export { DEFAULT_TUNING, type GatewayTuning } from './tuning.js'
export type { RunningGateway } from './gateway-types.js'

/** The gateway `fleetkit gateway serve` runs: no hooks, and a handle of its addresses and close only. */
export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const gateway = await startGatewayWithControls(options)
  return {
    enrollAddress: gateway.enrollAddress,
    agentAddress: gateway.agentAddress,
    metricsAddress: gateway.metricsAddress,
    close: () => gateway.close(),
  }
}

/**
 * The same gateway with the test entry's extras: `hooks` injected (controls.ts), and a handle that
 * also runs each timer's work now and reads its state back. Tests only: the benches need neither.
 */
export async function startGatewayWithControls(
  options: GatewayOptions,
  hooks: GatewayHooks = {},
): Promise<GatewayWithControls> {
  const tuning = { ...DEFAULT_TUNING, ...options.tuning }
  const clock = options.clock ?? systemClock
  const logger = options.logger ?? createLogger({ component: 'gateway' })
  const metrics = new GatewayMetrics()
  const onMetricsQueryFailed = (query: string, error: unknown) =>
    logger('warn', 'metrics_query_failed', { query, error: errorText(error) })
  const databaseProbe = new DatabaseProbe(options.pool, 5000)
  const database = new DatabaseHealth({
    probe: (how) => databaseProbe.probe(how),
    ...(options.embeddedDatabase ? { embedded: options.embeddedDatabase } : {}),
    intervalMs: tuning.databaseCheckMs,
    logger,
  })
  const scrapePool = readsWhileUp(options.pool, () => database.available)
  const lifecycleMetrics = new LifecycleMetrics(scrapePool, onMetricsQueryFailed)
  let pki = options.pki
  registerPkiGauges(lifecycleMetrics.registry, {
    pool: scrapePool,
    pki: () => pki,
    clock,
    onError: onMetricsQueryFailed,
  })
  registerSyncGauges(lifecycleMetrics.registry, scrapePool, onMetricsQueryFailed)
  registerDriftGauges(lifecycleMetrics.registry, scrapePool, onMetricsQueryFailed)
  registerReconcileGauges(lifecycleMetrics.registry, scrapePool, onMetricsQueryFailed)
  registerArchiveGauges(lifecycleMetrics.registry, scrapePool, onMetricsQueryFailed, {
    ...(options.archiveStateDir ? { stateDir: options.archiveStateDir } : {}),
    now: () => clock.now(),
  })
  const nowMs = () => clock.now().getTime()
  // Every query the gateway makes goes through this view: a dead or exhausted database is a 503.
  const pool = guardPool(options.pool, { onUnreachable: (error) => database.reportFailure(error) })

  const coalescer = new HeartbeatCoalescer({
    write: (batch) => recordHeartbeats(pool, batch, { writtenAt: clock.now() }),
    intervalMs: tuning.heartbeatFlushMs,
    onBatch: (size) => metrics.heartbeatBatchSize.observe(size),
    onError: (error, size) => {
      metrics.heartbeatFlushFailures.inc()
      logger('error', 'heartbeat_batch_failed', { size, retry: 'next interval', error: errorText(error) })
    },
  })
  const drift = new DriftTracker({
    pool,
    logger,
    reloadMs: tuning.driftReloadMs,
    onWritten: (verdict) => metrics.driftVerdictsWritten.inc({ state: verdict.state }),
    onRead: () => metrics.driftReads.inc(),
  })
  const auth = new AgentAuthenticator({
    pool,
    cacheMs: tuning.authCacheMs,
    onRefusal: (reason) => metrics.authRefusals.inc({ reason }),
    onRevoked: (count) => metrics.revocations.inc({}, count),
  })
  const shedder = new LoadShedder({
    tuning: tuning.loadShedding,
    ...(hooks.eventLoopDelayMs ? { delayMs: hooks.eventLoopDelayMs } : {}),
    onLevel: logLevelChange(logger),
    onShed: (listener, priority, reason) => metrics.requestsShed.inc({ listener, priority, reason }),
  })
  const issuer = new IssuancePool(tuning.issuanceWorkers)
  const g: GatewayContext = {
    pool,
    database,
    clock,
    logger,
    metrics,
    lifecycleMetrics,
    pki: () => pki,
    agentCertLifetimeSeconds: options.agentCertLifetimeSeconds,
    recoveryWindowSeconds: options.recoveryWindowSeconds ?? DEFAULT_RECOVERY_WINDOW_SECONDS,
    jobLeaseSeconds: tuning.jobLeaseSeconds,
    coalescer,
    drift,
    auth,
    enrollLimiter: new RateLimiter(tuning.enrollRate, nowMs),
    renewLimiter: new RateLimiter(tuning.renewRate, nowMs),
    shedder,
    issuer,
    ...(hooks.afterEnrollmentCommit ? { afterEnrollmentCommit: hooks.afterEnrollmentCommit } : {}),
    ...(options.readiness ? { readiness: options.readiness } : {}),
  }

  // Kept with the PKI, so sessions resume across a restart and across gateways sharing the directory.
  const tickets = options.pkiDir
    ? await TicketKeyKeeper.open({
        pkiDir: options.pkiDir,
        logger,
        clock,
        intervalMs: tuning.pkiReloadMs,
        apply: (keys) => {
          for (const server of [enrollServer, agentServer]) server.setTicketKeys(keys)
        },
      })
    : undefined
  const ticketKeys = () => (tickets ? { ticketKeys: tickets.current } : {})
  const enrollServer = createHttpsServer(
    { ...tlsOf(pki), ...ticketKeys(), minVersion: 'TLSv1.2', handshakeTimeout: tuning.handshakeTimeoutMs.enroll },
    requestHandler(
      'enroll',
      new Router([...enrollRoutes(g), ...recoverRoutes(g), ...releaseRoutes(options.releasesDir)]),
      g,
    ),
  )
  const agentServer = createHttpsServer(
    {
      ...tlsOf(pki),
      ...clientAuthOf(pki),
      ...ticketKeys(),
      minVersion: 'TLSv1.2',
      handshakeTimeout: tuning.handshakeTimeoutMs.agent,
    },
    requestHandler('agent', new Router([...agentRoutes(g), ...operatorRoutes(g, 'certificate')]), g),
  )
  const enrollLimits = tuning.enrollConnections
  limitConnections(enrollServer, enrollLimits, (reason) => metrics.enrollConnectionsClosed.inc({ reason }))
  limitConnections(agentServer, tuning.agentConnections, (reason) => metrics.agentConnectionsClosed.inc({ reason }))
  for (const server of [enrollServer, agentServer]) {
    // Agents keep their connection between heartbeats; an enrolling host needs one request.
    const keepAliveMs =
      server === enrollServer ? Math.min(tuning.keepAliveMs, enrollLimits.idleTimeoutMs) : tuning.keepAliveMs
    server.keepAliveTimeout = keepAliveMs
    server.headersTimeout = Math.min(keepAliveMs + 5000, 30_000)
    server.requestTimeout = 30_000
    // A failed handshake (no client certificate, unknown CA) is the client's problem, not ours.
    server.on('tlsClientError', () => metrics.authRefusals.inc({ reason: 'tls_handshake' }))
  }
  const loopbackOperator = requestHandler('operator', new Router(operatorRoutes(g, 'loopback')), g)
  const metricsServer = options.metricsBind
    ? createHttpServer((req, res) => {
        if ((req.url ?? '').startsWith(OPERATOR_PREFIX)) loopbackOperator(req, res)
        else void serveMetrics(req, res, g)
      })
    : undefined

  const servers: (Server | HttpsServer)[] = []
  try {
    // One issuance worker loaded before the listeners open: its start-up does not compete with requests.
    await issuer.warm()
    const enrollAddress = await listen(enrollServer, options.enrollBind, 'FLEETKIT_ENROLL_BIND', tuning.listenBacklog)
    servers.push(enrollServer)
    const agentAddress = await listen(agentServer, options.agentBind, 'FLEETKIT_AGENT_BIND', tuning.listenBacklog)
    servers.push(agentServer)
    const metricsAddress =
      metricsServer && options.metricsBind
        ? await listen(metricsServer, options.metricsBind, 'FLEETKIT_METRICS_BIND')
        : undefined
    if (metricsServer) servers.push(metricsServer)
    coalescer.start()
    database.start()
    shedder.start()
    const authCache = new AuthCacheKeeper({
      auth,
      rawPool: options.pool,
      pool,
      logger,
      cacheMs: tuning.authCacheMs,
      unheardCacheMs: 1000,
      recheckMs: tuning.authRecheckMs,
      relistenMs: 1000,
    })
    await authCache.start()
    const replacePkiSet = (set: PkiSet) => {
      pki = set
      enrollServer.setSecureContext({ ...tlsOf(set), ...ticketKeys(), minVersion: 'TLSv1.2' })
      agentServer.setSecureContext({ ...tlsOf(set), ...clientAuthOf(set), ...ticketKeys(), minVersion: 'TLSv1.2' })
      logger('info', 'pki_set_replaced', { ca_sha256: set.ca.fingerprintSha256, bundle: set.bundleFingerprints })
    }
    const reloader = options.pkiDir
      ? new PkiReloader({
          dir: options.pkiDir,
          clock,
          logger,
          current: () => pki,
          apply: replacePkiSet,
          intervalMs: tuning.pkiReloadMs,
          liveIssuers: (now) => liveIssuerFingerprints(options.pool, now),
        })
      : undefined
    reloader?.start()
    tickets?.start()
    const sweeper = options.sweep
      ? new Sweeper({
          pool,
          sweep: options.sweep.run,
          thresholds: options.sweep.thresholds,
          intervalMs: tuning.sweepIntervalMs,
          leaseMs: tuning.sweepLeaseMs,
          logger,
          metrics: lifecycleMetrics,
          databaseAvailable: () => database.available,
        })
      : undefined
    sweeper?.start()
    let closing: Promise<void> | undefined
    return {
      enrollAddress,
      agentAddress,
      metricsAddress,
      metrics,
      lifecycleMetrics,
      sweepNow: async () => (sweeper ? sweeper.tick() : 'disabled'),
      isSweepLeader: () => sweeper?.isLeader ?? false,
      flushHeartbeats: () => coalescer.flush(),
      driftSettled: () => drift.settled(),
      replacePkiSet,
      currentPkiSet: () => pki,
      checkDatabase: () => database.check(),
      recheckAuthCache: () => authCache.recheck(),
      databaseAvailable: () => database.available,
      sampleLoad: () => shedder.sample(),
      inFlight: (listener) => shedder.inFlightOf(listener),
      reloadPki: async () => (reloader ? reloader.check() : 'disabled'),
      reloadTicketKeys: async () => (tickets ? tickets.check() : 'disabled'),
      close() {
        closing ??= (async () => {
          reloader?.stop()
          tickets?.stop()
          database.stop()
          await databaseProbe.close()
          shedder.stop()
          await authCache.stop()
          await sweeper?.stop()
          await Promise.all(servers.map((server) => closeServer(server)))
          await coalescer.close()
          await drift.settled()
          await issuer.close()
        })()
        return closing
      },
    }
  } catch (error) {
    database.stop()
    await databaseProbe.close()
    await Promise.all(servers.map((server) => closeServer(server)))
    await issuer.close()
    throw error
  }
}
