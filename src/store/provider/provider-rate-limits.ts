// The provider's request budget shared by every process of one project (provider_rate_limits,
// migrations 0001 and 0010): each change reads the row under a lock, applies the provider's rule
// (given as a function: the rule lives in src/provider/) and writes it back in one transaction.
import type pg from 'pg'

import { type Queryable, withTransaction } from '../transaction.js'

/** One project's budget, as src/provider/rate-budget.ts keeps it (times in ms since the epoch). */
export interface RateLimitRow {
  limit: number
  remaining: number
  atMs: number
  blockedUntilMs: number
  /** The last RateLimit-Reset seen (0 before any). */
  resetAtMs: number
}

/** A provider's project: `hetzner` and the 16 hex digits that name its token. */
export interface RateLimitKey {
  provider: string
  projectKey: string
}

interface Row {
  request_limit: number | null
  remaining: number | null
  updated_at: Date
  blocked_until: Date | null
  reset_at: Date | null
}

function fromRow(row: Row, initial: RateLimitRow): RateLimitRow {
  return {
    limit: row.request_limit ?? initial.limit,
    remaining: row.remaining ?? initial.remaining,
    atMs: row.updated_at.getTime(),
    blockedUntilMs: row.blocked_until?.getTime() ?? 0,
    resetAtMs: row.reset_at?.getTime() ?? 0,
  }
}

/**
 * Runs `change` on the budget under `key` with its row locked (created from `initial` when absent)
 * and stores the row it returns: two processes taking at once see each other's takes.
 */
export async function updateRateLimit<T>(
  pool: pg.Pool,
  key: RateLimitKey,
  initial: RateLimitRow,
  change: (row: RateLimitRow) => { row: RateLimitRow; result: T },
): Promise<T> {
  return withTransaction(pool, async (client) => {
    await client.query(
      `INSERT INTO provider_rate_limits (provider, project_key, request_limit, remaining, updated_at)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (provider, project_key) DO NOTHING`,
      [key.provider, key.projectKey, initial.limit, initial.remaining, new Date(initial.atMs)],
    )
    const { rows } = await client.query<Row>(
      `SELECT request_limit, remaining, updated_at, blocked_until, reset_at FROM provider_rate_limits
       WHERE provider = $1 AND project_key = $2 FOR UPDATE`,
      [key.provider, key.projectKey],
    )
    const { row, result } = change(fromRow(rows[0]!, initial))
    await client.query(
      `UPDATE provider_rate_limits
       SET request_limit = $3, remaining = $4, updated_at = $5, blocked_until = $6, reset_at = $7
       WHERE provider = $1 AND project_key = $2`,
      [
        key.provider,
        key.projectKey,
        Math.max(1, Math.round(row.limit)),
        Math.max(0, row.remaining),
        new Date(row.atMs),
        row.blockedUntilMs > 0 ? new Date(row.blockedUntilMs) : null,
        row.resetAtMs > 0 ? new Date(row.resetAtMs) : null,
      ],
    )
    return result
  })
}

/** The budget under `key` as last stored; undefined before any process used it. */
export async function readRateLimit(q: Queryable, key: RateLimitKey): Promise<RateLimitRow | undefined> {
  const { rows } = await q.query<Row>(
    `SELECT request_limit, remaining, updated_at, blocked_until, reset_at FROM provider_rate_limits
     WHERE provider = $1 AND project_key = $2`,
    [key.provider, key.projectKey],
  )
  const row = rows[0]
  return row ? fromRow(row, { limit: 0, remaining: 0, atMs: 0, blockedUntilMs: 0, resetAtMs: 0 }) : undefined
}
