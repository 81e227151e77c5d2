// What tests hold beyond the gateway handle of the product and the benches: the timers' work run now, the
// state read back, and the hooks a test injects. Only startGatewayWithControls (gateway.ts) gives them.
import type { PkiSet } from '../pki/pki-set.js'
import type { RunningGateway } from './gateway-types.js'
import type { LifecycleMetrics } from './metrics/lifecycle-metrics.js'
import type { LoadLevel } from './load/load-shedder.js'
import type { GatewayMetrics } from './metrics/metrics.js'
import type { SweepTick } from './sweeper.js'

/** What a test injects into a gateway; `fleetkit gateway serve` passes none (startGateway). */
export interface GatewayHooks {
  /** Runs right after an enrollment committed, before its answer is sent (the crash test kills the process). */
  afterEnrollmentCommit?: () => void
  /** The overload signal (event-loop delay in ms) the shedder samples. Default: perf_hooks. */
  eventLoopDelayMs?: () => number
}

/** Each timer's work, run now, and the state a test reads back. */
interface GatewayControls {
  metrics: GatewayMetrics
  lifecycleMetrics: LifecycleMetrics
  /** Run one sweep tick now (the timer runs one every sweepIntervalMs). */
  sweepNow(): Promise<SweepTick | 'disabled'>
  /** Whether this gateway holds the sweep lease. */
  isSweepLeader(): boolean
  /** Write pending heartbeats now (the timer and shutdown do it too). */
  flushHeartbeats(): Promise<void>
  /** Resolves once the drift digests received so far are judged (and any change written). */
  driftSettled(): Promise<void>
  /** Serve with a new PKI set (already loaded and self-tested) from the next handshake on. */
  replacePkiSet(set: PkiSet): void
  currentPkiSet(): PkiSet
  /** Re-read every cached certificate row now; returns how many were dropped (a timer does it). */
  recheckAuthCache(): Promise<number>
  /** Probe the database now (the timer does it every databaseCheckMs). */
  checkDatabase(): Promise<void>
  /** Whether the last probe (or request) found the database answering. */
  databaseAvailable(): boolean
  /** Sample the overload signal now and return the load level (the timer does it every loadShedding.sampleMs). */
  sampleLoad(): LoadLevel
  /** Requests in progress on a listener now. */
  inFlight(listener: 'enroll' | 'agent'): number
  /** Re-read the PKI directory now (the timer does it every pkiReloadMs). */
  reloadPki(): Promise<'unchanged' | 'replaced' | 'kept' | 'disabled'>
  /** Re-read the TLS session ticket keys now (the timer does it every pkiReloadMs). */
  reloadTicketKeys(): Promise<'unchanged' | 'replaced' | 'kept' | 'disabled'>
}

export type GatewayWithControls = RunningGateway & GatewayControls
