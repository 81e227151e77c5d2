// What startGateway takes and what it returns: the options of one gateway process and the handle
// that tests, benches and `fleetkit gateway serve` hold (src/gateway/gateway.ts builds it).
import type { StatePool } from '../store/transaction.js'

import type { Clock } from '../config/clock.js'
import type { Logger } from '../log/logger.js'
import type { PkiSet } from '../pki/pki-set.js'
import type { BindAddress } from './config.js'
import type { EmbeddedDatabase } from './database-health.js'
import type { LifecycleMetrics } from './lifecycle-metrics.js'
import type { LoadLevel } from './load-shedder.js'
import type { GatewayMetrics } from './metrics.js'
import type { SweepFunction, SweepTick } from './sweeper.js'
import type { GatewayTuning } from './tuning.js'

export interface GatewayOptions {
  pool: StatePool
  pki: PkiSet
  /** Where `pki` was loaded from; when set, the directory is watched and a changed set hot-reloaded. */
  pkiDir?: string
  enrollBind: BindAddress
  agentBind: BindAddress
  /** Omit for no metrics listener. */
  metricsBind?: BindAddress
  agentCertLifetimeSeconds: number
  /** Default 7 days (spec 05). */
  recoveryWindowSeconds?: number
  clock?: Clock
  logger?: Logger
  tuning?: Partial<GatewayTuning>
  /** The embedded database, started again when its postmaster died (serve passes it for the embedded default). */
  embeddedDatabase?: EmbeddedDatabase
  /** Fault injection: runs right after an enrollment committed, before its answer is sent. */
  afterEnrollmentCommit?: () => void
  /** The sweep (src/lifecycle/node/sweep.ts with its thresholds); omitted: this gateway never sweeps. */
  sweep?: SweepFunction
  /** The overload signal (event-loop delay in ms) the shedder samples; tests inject one. Default: perf_hooks. */
  eventLoopDelayMs?: () => number
}

export interface RunningGateway {
  enrollAddress: BindAddress
  agentAddress: BindAddress
  metricsAddress: BindAddress | undefined
  metrics: GatewayMetrics
  lifecycleMetrics: LifecycleMetrics
  /** Run one sweep tick now (tests; the timer runs one every sweepIntervalMs). */
  sweepNow(): Promise<SweepTick | 'disabled'>
  /** Whether this gateway holds the sweep lease. */
  isSweepLeader(): boolean
  /** Write pending heartbeats now (tests; shutdown does it too). */
  flushHeartbeats(): Promise<void>
  /** Serve with a new PKI set (already loaded and self-tested) from the next handshake on. */
  replacePkiSet(set: PkiSet): void
  currentPkiSet(): PkiSet
  /** Re-read every cached certificate row now; returns how many were dropped (tests; a timer does it). */
  recheckAuthCache(): Promise<number>
  /** Probe the database now (tests; the timer does it every databaseCheckMs). */
  checkDatabase(): Promise<void>
  /** Whether the last probe (or request) found the database answering. */
  databaseAvailable(): boolean
  /** Sample the overload signal now and return the load level (tests; the timer does it every loadShedding.sampleMs). */
  sampleLoad(): LoadLevel
  /** Requests in progress on a listener now. */
  inFlight(listener: 'enroll' | 'agent'): number
  /** Re-read the PKI directory now (tests; the timer does it every pkiReloadMs). */
  reloadPki(): Promise<'unchanged' | 'replaced' | 'kept' | 'disabled'>
  /** Re-read the TLS session ticket keys now (tests; the timer does it every pkiReloadMs). */
  reloadTicketKeys(): Promise<'unchanged' | 'replaced' | 'kept' | 'disabled'>
  close(): Promise<void>
}
