// How long the agent waits before calling an unreachable gateway again: exponential with a cap
// and decorrelated jitter, so thousands of agents that lost the gateway together do not return together.
import type { Rng } from '../config/rng.js'
import { unitInterval } from '../config/rng.js'

export interface BackoffPolicy {
  /** The first wait and the floor of every wait: the agent's heartbeat interval. */
  baseMs: number
  /** No wait is longer than this. */
  capMs: number
}

const DEFAULT_BACKOFF_CAP_MS = 300_000

/**
 * Decorrelated jitter (AWS Architecture Blog, "Exponential Backoff and Jitter"):
 * next = min(cap, uniform(base, previous * 3)). The range grows about threefold per failure,
 * every draw stays between base and cap, and one agent's waits do not line up with another's.
 */
export function nextBackoffMs(previousMs: number, policy: BackoffPolicy, rng: Rng): number {
  const base = Math.max(policy.baseMs, 0)
  const cap = Math.max(policy.capMs, base)
  const upper = Math.max(base, Math.min(cap, Math.max(previousMs, base) * 3))
  return Math.min(cap, Math.round(base + unitInterval(rng) * (upper - base)))
}

/** The backoff state of one run loop: `failed()` gives the next wait, `succeeded()` resets it. */
export class Backoff {
  private previousMs = 0
  private failures = 0

  constructor(
    private readonly policy: BackoffPolicy,
    private readonly rng: Rng,
  ) {}

  failed(): number {
    this.failures++
    this.previousMs = nextBackoffMs(this.previousMs, this.policy, this.rng)
    return this.previousMs
  }

  succeeded(): void {
    this.previousMs = 0
    this.failures = 0
  }

  get consecutiveFailures(): number {
    return this.failures
  }
}

/**
 * The wait a Retry-After header asks for (seconds or an HTTP date), capped; undefined without
 * a usable header. Callers wait at least this long and add their own jitter on top.
 */
export function retryAfterHeaderMs(
  header: string | string[] | undefined,
  nowMs: number,
  capMs = DEFAULT_BACKOFF_CAP_MS,
): number | undefined {
  const value = Array.isArray(header) ? header[0] : header
  if (value === undefined || value.trim() === '') return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, capMs)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.min(Math.max(date - nowMs, 0), capMs)
}

/** Answers that mean "the gateway cannot serve this now, ask again later" (shedding, database down). */
export function isRetryLaterStatus(status: number): boolean {
  return status === 429 || status >= 500
}

/**
 * The wait before retrying a shed or unavailable request: what Retry-After asks (else an exponential
 * backoff by attempt), plus a random share of up to half of it (at least a second), so agents told
 * the same Retry-After in the same second spread out instead of returning together.
 */
export function jitteredRetryMs(
  header: string | string[] | undefined,
  attempt: number,
  nowMs: number,
  rng: Rng,
  capMs = DEFAULT_BACKOFF_CAP_MS,
): number {
  const asked = retryAfterHeaderMs(header, nowMs, capMs) ?? Math.min(1000 * 2 ** attempt, 60_000)
  return Math.min(capMs, asked + Math.round(unitInterval(rng) * Math.max(1000, asked / 2)))
}

/**
 * The wait of a heartbeat the gateway shed or could not serve (429, 5xx): what Retry-After asks plus up
 * to one heartbeat interval of jitter, so thousands of agents told the same Retry-After do not come back
 * in the same second; never less than the backoff's next wait.
 */
export function retryLaterWaitMs(
  retryAfter: string | string[] | undefined,
  backoff: Backoff,
  heartbeatMs: number,
  nowMs: number,
  rng: Rng,
): number {
  const askedMs = retryAfterHeaderMs(retryAfter, nowMs) ?? 0
  return Math.max(askedMs + Math.round(unitInterval(rng) * heartbeatMs), backoff.failed())
}
