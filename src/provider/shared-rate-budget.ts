// The rate budget shared through the state database: every process of a project takes from one
// row (the API's limit is per project), with the same rule as the in-memory budget.
import type { StatePool } from '../store/transaction.js'

import { updateRateLimit } from '../store/provider/provider-rate-limits.js'
import { initialBudgetState, observeBudget, type RateBudget, takeFromBudget } from './rate-budget.js'

/** The Hetzner Cloud budget of the project whose token `projectKey` names (ApiToken.budgetKey()). */
export function sharedRateBudget(pool: StatePool, projectKey: string): RateBudget {
  const key = { provider: 'hetzner', projectKey }
  const initial = initialBudgetState()
  return {
    take: (nowMs) =>
      updateRateLimit(pool, key, { ...initial, atMs: nowMs }, (row) => {
        const taken = takeFromBudget(row, nowMs)
        return { row: taken.state, result: taken.waitMs }
      }),
    observe: (observation, nowMs) =>
      updateRateLimit(pool, key, { ...initial, atMs: nowMs }, (row) => ({
        row: observeBudget(row, observation, nowMs),
        result: undefined,
      })),
    block: (untilMs) =>
      updateRateLimit(pool, key, initial, (row) => ({
        row: { ...row, blockedUntilMs: Math.max(row.blockedUntilMs, untilMs) },
        result: undefined,
      })),
  }
}
