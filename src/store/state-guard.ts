// The gateway's view of its PostgreSQL failing: a pool whose connection failures and
// exhaustion become STATE_UNAVAILABLE (503 + Retry-After), never a 500 that reads as a bug.
import type pg from 'pg'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { describeSqlState, isConnectionError, isServerFailure, sqlState } from './pg-errors.js'

/** Seconds an agent is told to wait when the database is unavailable. */
export const STATE_RETRY_AFTER_SECONDS = 5

export type StateUnavailableReason = 'unreachable' | 'pool_exhausted' | 'database_failed'

export function stateUnavailable(
  reason: StateUnavailableReason,
  cause?: unknown,
  body: Record<string, unknown> = {},
): FleetkitError {
  const what =
    reason === 'pool_exhausted'
      ? 'every database connection of this gateway is busy'
      : reason === 'database_failed'
        ? `the gateway's database failed the statement (SQLSTATE ${describeSqlState(sqlState(cause) ?? 'unknown')})`
        : 'the gateway cannot reach its database'
  return new FleetkitError('STATE_UNAVAILABLE', `${what}; retry after ${STATE_RETRY_AFTER_SECONDS} s`, {
    data: { reason, retryAfterSeconds: STATE_RETRY_AFTER_SECONDS, body },
    ...(cause === undefined ? {} : { cause }),
  })
}

/**
 * Whether an error from a query means the database, not the request, failed: a connection
 * error (class 08, shutdown, socket errno), a failure of the server's own (its disk full, too many
 * connections, an I/O error, read-only: isServerFailure), or an error of node-postgres itself (no
 * SQLSTATE: "Connection terminated", a client no longer queryable). Our own programming errors
 * (TypeError, RangeError) stay bugs.
 */
export function isQueryUnavailable(error: unknown): boolean {
  if (error instanceof FleetkitError) return false
  if (isConnectionError(error) || isServerFailure(error)) return true
  return (
    sqlState(error) === undefined &&
    error instanceof Error &&
    !(error instanceof TypeError || error instanceof RangeError)
  )
}

/** A query failure that leaves its connection usable: the server answered, with a failure of its own (never a class 08 or 57P0x one). */
function keepsConnection(error: unknown): boolean {
  return isServerFailure(error)
}

export interface GuardOptions {
  /** Told when a connection could not be made or broke: the health check looks at once. */
  onUnreachable: (error: unknown) => void
}

/**
 * A view of `pool` whose `query` and `connect` (and the clients it hands out) throw
 * STATE_UNAVAILABLE for database failures. Every failure of `connect` is one: the pool could not
 * hand out a connection. When all `max` connections are in use it is exhaustion, else unreachable.
 */
export function guardPool(pool: pg.Pool, options: GuardOptions): pg.Pool {
  const max = (pool.options as { max?: number }).max ?? 10
  const connectFailed = (error: unknown): FleetkitError => {
    if (error instanceof FleetkitError) return error
    const exhausted = pool.totalCount >= max && sqlState(error) === undefined && !isConnectionError(error)
    if (!exhausted) options.onUnreachable(error)
    return stateUnavailable(exhausted ? 'pool_exhausted' : 'unreachable', error)
  }
  const queryFailed = (error: unknown): unknown => {
    if (!isQueryUnavailable(error)) return error
    // The server answered (its disk is full, ...): it is reachable, the health check need not look.
    if (keepsConnection(error)) return stateUnavailable('database_failed', error)
    options.onUnreachable(error)
    return stateUnavailable('unreachable', error)
  }
  const guardClient = (client: pg.PoolClient): pg.PoolClient => {
    listenForErrors(client)
    return guardedClient(client)
  }
  const guardedClient = (client: pg.PoolClient): pg.PoolClient =>
    new Proxy(client, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown
        if (prop === 'query') {
          return (...args: unknown[]) =>
            (target.query as (...a: unknown[]) => Promise<unknown>)(...args).catch((error: unknown) => {
              throw queryFailed(error)
            })
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
      },
    })
  return new Proxy(pool, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown
      if (prop === 'connect') {
        return async () => {
          let client: pg.PoolClient
          try {
            client = await target.connect()
          } catch (error) {
            throw connectFailed(error)
          }
          return guardClient(client)
        }
      }
      if (prop === 'query') {
        // One checked-out client, so a failed connect and a failed query are told apart.
        return async (...args: unknown[]) => {
          let client: pg.PoolClient
          try {
            client = await target.connect()
          } catch (error) {
            throw connectFailed(error)
          }
          let broken: Error | undefined
          try {
            return await (client.query as (...a: unknown[]) => Promise<unknown>)(...args)
          } catch (error) {
            if (isQueryUnavailable(error) && !keepsConnection(error)) broken = error as Error
            throw queryFailed(error)
          } finally {
            client.release(broken)
          }
        }
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
}

const listening = new WeakSet<pg.PoolClient>()

/**
 * A checked-out client has no listener of pg-pool's (that one is only on idle clients): a server that
 * ends the connection between two statements (a shutdown, a failover) would emit an unhandled 'error'
 * and end the process. The error is dropped here; the client's next statement fails as a lost
 * connection (08006) and is answered 503 like any other.
 */
function listenForErrors(client: pg.PoolClient): void {
  if (listening.has(client)) return
  listening.add(client)
  client.on('error', () => undefined)
}

/**
 * A view of `pool` for the reads made at scrape time (the metrics' gauges): while the gateway judges its
 * database down they fail at once, as requests are answered 503 at once, instead of each waiting out a
 * connect or statement timeout (15 s); the gauges then keep their last values and /metrics answers at once.
 */
export function readsWhileUp(pool: Pick<pg.Pool, 'query'>, isUp: () => boolean): Pick<pg.Pool, 'query'> {
  const query = (...args: unknown[]): Promise<unknown> =>
    isUp()
      ? (pool.query as (...a: unknown[]) => Promise<unknown>)(...args)
      : Promise.reject(stateUnavailable('unreachable'))
  return { query: query as pg.Pool['query'] }
}
