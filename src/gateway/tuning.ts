// The gateway's tuning: intervals, caches, rate limits, connection caps and load shedding, with the
// defaults spec 05 gives; tests and the bench override parts of it (startGateway's `tuning`).
import { defaultIssuanceWorkers } from './issuance/issuance-pool.js'
import { DEFAULT_LOAD_SHEDDER_TUNING, type LoadShedderTuning } from './load/load-shedder.js'
import type { ConnectionLimits, SourceLimits } from './tls/connection-limits.js'
import type { RateLimiterOptions } from './load/token-bucket.js'

export interface GatewayTuning {
  /** Interval of heartbeat batch writes (spec: at most about one per second). */
  heartbeatFlushMs: number
  /** How long an authenticated certificate row is reused (revocations are announced: auth-cache.ts). */
  authCacheMs: number
  /** How often every cached certificate row is read again (the safety net under LISTEN/NOTIFY). */
  authRecheckMs: number
  /** How long a job lease lasts without a job heartbeat. */
  jobLeaseSeconds: number
  /**
   * How long a node's recorded fingerprint and drift verdict are held before a heartbeat's digest is
   * judged against a fresh read (drift-tracker.ts); a drifted or unknown node's for `notInSync`.
   */
  driftReloadMs: { inSync: number; notInSync: number }
  enrollRate: RateLimiterOptions
  renewRate: RateLimiterOptions
  /** Connections idle this long are closed (agents keep theirs alive between heartbeats). */
  keepAliveMs: number
  /** How often the PKI directory is re-read (spec: every 2 s). */
  pkiReloadMs: number
  /** How often the database is probed (and, embedded, restarted when it died). */
  databaseCheckMs: number
  /** Caps and idle timeout of the unauthenticated enrollment listener. */
  enrollConnections: ConnectionLimits
  /**
   * Caps of the agent listener: in total and per source address, so idle connections (a TLS handshake
   * never started holds a descriptor until handshakeTimeoutMs.agent) cannot take the descriptors the
   * database pool, the PKI reload and the other agents need. Idle agents between heartbeats are
   * closed by keepAliveMs, so there is no idle timeout of its own.
   */
  agentConnections: SourceLimits
  /**
   * Descriptors kept below the soft RLIMIT_NOFILE beyond both listeners' caps: the database pool,
   * the PKI reload's file reads, the issuance workers, the metrics listener, logs. `gateway serve`
   * refuses to start when enroll + agent caps + this reserve exceed the limit (descriptor-limit.ts).
   */
  descriptorReserve: number
  /**
   * A TLS handshake not finished in this time is cut off, per listener. The enrollment listener's is
   * short (anybody can reach it and hold a handshake open). The agent listener's is longer: when a
   * whole fleet reconnects at once (a gateway restart) its handshakes queue for the CPU, and one cut
   * off is a reset the agent retries after its backoff with a new handshake, which lengthens the queue.
   */
  handshakeTimeoutMs: { enroll: number; agent: number }
  /** Listen queue of each TLS listener: Node's 511 overflows when thousands of agents reconnect at once. */
  listenBacklog: number
  /** How often the sweep runs (spec: every 2 s), on the one gateway that holds the sweep lease. */
  sweepIntervalMs: number
  /**
   * How long the sweep lease lasts unrenewed (its holder renews every third of it): the longest a dead
   * or cut-off leader's sweeps are missed before another gateway takes over.
   */
  sweepLeaseMs: number
  /** Worker threads that verify CSRs and sign certificates (default: defaultIssuanceWorkers()). */
  issuanceWorkers: number
  /** When requests are shed: in-flight limits per listener and event-loop delay levels (load-shedder.ts). */
  loadShedding: LoadShedderTuning
}

export const DEFAULT_TUNING: GatewayTuning = {
  heartbeatFlushMs: 1000,
  authCacheMs: 300_000,
  authRecheckMs: 30_000,
  jobLeaseSeconds: 120,
  driftReloadMs: { inSync: 300_000, notInSync: 30_000 },
  enrollRate: { perSource: { burst: 20, perSecond: 2 }, global: { burst: 200, perSecond: 50 } },
  renewRate: { perSource: { burst: 10, perSecond: 1 }, global: { burst: 500, perSecond: 100 } },
  keepAliveMs: 75_000,
  pkiReloadMs: 2000,
  databaseCheckMs: 2000,
  enrollConnections: { maxConnections: 512, maxPerSource: 64, idleTimeoutMs: 10_000 },
  agentConnections: { maxConnections: 16_384, maxPerSource: 1024 },
  descriptorReserve: 256,
  handshakeTimeoutMs: { enroll: 5000, agent: 30_000 },
  listenBacklog: 4096,
  sweepIntervalMs: 2000,
  sweepLeaseMs: 10_000,
  loadShedding: DEFAULT_LOAD_SHEDDER_TUNING,
  issuanceWorkers: defaultIssuanceWorkers(),
}
