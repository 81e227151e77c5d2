// What every route handler shares: the pool, the clock, the current PKI set, the
// limits and counters. One object, built once by startGateway.
import type pg from 'pg'

import type { Clock } from '../config/clock.js'
import type { PkiSet } from '../pki/pki-set.js'
import type { AgentAuthenticator } from './agent-auth.js'
import type { HeartbeatCoalescer } from './heartbeat-coalescer.js'
import type { Logger } from '../log/logger.js'
import type { GatewayMetrics } from './metrics.js'
import type { RateLimiter } from './token-bucket.js'

export interface GatewayContext {
  pool: pg.Pool
  clock: Clock
  logger: Logger
  metrics: GatewayMetrics
  /** The PKI set in use now; replaced whole on reload. */
  pki(): PkiSet
  agentCertLifetimeSeconds: number
  /** How long after its certificate expired a node may still recover by a signed challenge. */
  recoveryWindowSeconds: number
  jobLeaseSeconds: number
  coalescer: HeartbeatCoalescer
  auth: AgentAuthenticator
  enrollLimiter: RateLimiter
  renewLimiter: RateLimiter
}
