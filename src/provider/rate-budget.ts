// The request budget of one Hetzner Cloud project, as the API reports it on every response
// (RateLimit-Limit / -Remaining / -Reset). An interface, so processes can share one budget
// through the database (the limit is per project, not per process); memoryRateBudget serves one process.

/** What one response said about the budget. */
export interface RateObservation {
  /** Requests an hour (RateLimit-Limit). */
  limit: number
  /** Requests left now (RateLimit-Remaining). */
  remaining: number
  /** When the budget is full again, ms since the epoch (RateLimit-Reset is UNIX seconds). */
  resetAtMs: number
}

export interface RateBudget {
  /**
   * Asks to send one request at `nowMs`: 0 when it may be sent now (and it is counted), else how many
   * ms to wait before asking again.
   */
  take(nowMs: number): Promise<number>
  /** Records the headers of a response received at `nowMs`. */
  observe(observation: RateObservation, nowMs: number): Promise<void>
  /** After a 429: nothing is sent before `untilMs`. */
  block(untilMs: number): Promise<void>
}

/** The budget state both implementations keep, and the one rule they apply to it. */
export interface RateBudgetState {
  limit: number
  /** Requests left when last observed or taken. */
  remaining: number
  /** When `remaining` was true. */
  atMs: number
  blockedUntilMs: number
  /** The last RateLimit-Reset seen, for reports (0 before any). */
  resetAtMs: number
}

/** The API's documented default (3,600 an hour), assumed until a response says otherwise. */
const DEFAULT_HOURLY_LIMIT = 3600
const HOUR_MS = 3_600_000

/**
 * The rule: the budget refills at limit per hour (about one a second by default); a request may be
 * sent when at least one is left. Returns the wait and the state after a take (unchanged when waiting).
 */
export function takeFromBudget(state: RateBudgetState, nowMs: number): { waitMs: number; state: RateBudgetState } {
  if (state.blockedUntilMs > nowMs) return { waitMs: state.blockedUntilMs - nowMs, state }
  const perMs = state.limit / HOUR_MS
  const available = Math.min(state.limit, state.remaining + Math.max(0, nowMs - state.atMs) * perMs)
  if (available >= 1) return { waitMs: 0, state: { ...state, remaining: available - 1, atMs: nowMs } }
  return { waitMs: Math.ceil((1 - available) / perMs), state }
}

/**
 * The state after a response. The headers count every consumer of the project, so fewer left than
 * we thought is adopted; more is not, since requests of ours (or another process's) may still be in
 * flight that the response did not count yet. The refill catches up either way.
 */
export function observeBudget(state: RateBudgetState, observation: RateObservation, nowMs: number): RateBudgetState {
  const limit = Math.max(1, observation.limit)
  const ours = Math.min(limit, state.remaining + (Math.max(0, nowMs - state.atMs) * limit) / HOUR_MS)
  return {
    ...state,
    limit,
    remaining: Math.max(0, Math.min(ours, observation.remaining)),
    atMs: nowMs,
    resetAtMs: observation.resetAtMs,
  }
}

export function initialBudgetState(): RateBudgetState {
  return { limit: DEFAULT_HOURLY_LIMIT, remaining: DEFAULT_HOURLY_LIMIT, atMs: 0, blockedUntilMs: 0, resetAtMs: 0 }
}

/** One process's budget: enough for a single fleetkit command; several processes share the store's. */
export function memoryRateBudget(initial: RateBudgetState = initialBudgetState()): RateBudget {
  let state = initial
  return {
    take: async (nowMs) => {
      const taken = takeFromBudget(state, nowMs)
      state = taken.state
      return taken.waitMs
    },
    observe: async (observation, nowMs) => {
      state = observeBudget(state, observation, nowMs)
    },
    block: async (untilMs) => {
      state = { ...state, blockedUntilMs: Math.max(state.blockedUntilMs, untilMs) }
    },
  }
}
