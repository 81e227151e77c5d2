// What every route handler shares: the pool, the clock, the current PKI set, the
// limits and counters. One object, built once by startGateway.
import type pg from 'pg'

import type { Clock } from '../config/clock.js'
import type { PkiSet } from '../pki/pki-set.js'
import type { AgentAuthenticator } from './agent-auth.js'
import type { HeartbeatCoalescer } from './heartbeat-coalescer.js'
import type { Logger } from '../log/logger.js'
import type { LifecycleMetrics } from './lifecycle-metrics.js'
import type { GatewayMetrics } from './metrics.js'
import type { RateLimiter } from './token-bucket.js'

export interface GatewayContext {
  pool: pg.Pool
  clock: Clock
  logger: Logger
  metrics: GatewayMetrics
  /** Leases, sweeps, fleet gauges and the runtime defaults (prom-client). */
  lifecycleMetrics: LifecycleMetrics
  /** The PKI set in use now; replaced whole on reload. */
  pki(): PkiSet
  agentCertLifetimeSeconds: number
  jobLeaseSeconds: number
  coalescer: HeartbeatCoalescer
  auth: AgentAuthenticator
  enrollLimiter: RateLimiter
  renewLimiter: RateLimiter
}
