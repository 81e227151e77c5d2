// What every route handler shares: the pool, the clock, the current PKI set, the
// limits and counters. One object, built once by startGatewayWithControls.
import type { StatePool } from '../../store/transaction.js'

import type { Clock } from '../../config/clock.js'
import type { PkiSet } from '../../pki/pki-set.js'
import type { AgentAuthenticator } from '../auth/agent-auth.js'
import type { DatabaseHealth } from '../load/database-health.js'
import type { DriftTracker } from '../drift/drift-tracker.js'
import type { HeartbeatCoalescer } from '../load/heartbeat-coalescer.js'
import type { IssuancePool } from '../issuance/issuance-pool.js'
import type { LoadShedder } from '../load/load-shedder.js'
import type { Logger } from '../../log/logger.js'
import type { LifecycleMetrics } from '../metrics/lifecycle-metrics.js'
import type { GatewayMetrics } from '../metrics/metrics.js'
import type { RateLimiter } from '../load/token-bucket.js'
import type { ReadinessFunction } from './status-view.js'

export interface GatewayContext {
  /** The guarded pool: database failures throw STATE_UNAVAILABLE (state-guard.ts). */
  pool: StatePool
  database: DatabaseHealth
  clock: Clock
  logger: Logger
  metrics: GatewayMetrics
  /** Leases, sweeps, fleet gauges and the runtime defaults (prom-client). */
  lifecycleMetrics: LifecycleMetrics
  /** The PKI set in use now; replaced whole on reload. */
  pki(): PkiSet
  agentCertLifetimeSeconds: number
  /** How long after its certificate expired a node may still recover by a signed challenge. */
  recoveryWindowSeconds: number
  jobLeaseSeconds: number
  coalescer: HeartbeatCoalescer
  /** Judges the drift digest heartbeats carry, in memory; writes only a change (drift-tracker.ts). */
  drift: DriftTracker
  auth: AgentAuthenticator
  enrollLimiter: RateLimiter
  renewLimiter: RateLimiter
  /** CSR checks and certificate signing, in worker threads off the event loop. */
  issuer: IssuancePool
  /** Admits or sheds each routed request (503 GATEWAY_OVERLOADED) before any work. */
  shedder: LoadShedder
  /** A test's hook (controls.ts): runs right after an enrollment committed, before the answer is sent. */
  afterEnrollmentCommit?: () => void
  /** The status page's readiness verdict, as the gateway was given it (the lifecycle is not its to import). */
  readiness?: ReadinessFunction
}
