// The pg Client class of every fleetkit pool. A connection that cannot be made (refused, timed out)
// fails with SQLSTATE 08001 and a statement whose connection was lost under it ("Connection terminated
// unexpectedly", a reset socket) with 08006, as JDBC reports them: the CLI (STATE_UNREACHABLE) and the
// gateway (503) then tell them by their code, never by node-postgres's message text. SQL errors and
// programming errors pass unchanged; the driver's own error stays the `cause`.
import type pg from 'pg'

import { sqlState } from '../checks/sqlstate.js'

const UNABLE_TO_CONNECT = '08001'
const CONNECTION_FAILURE = '08006'
const ANNOTATED = Symbol('fleetkit.connectionFailure')

function annotate(error: unknown, code: string, what: string): unknown {
  if (
    !(error instanceof Error) ||
    sqlState(error) !== undefined ||
    error instanceof TypeError ||
    error instanceof RangeError
  )
    return error
  return Object.assign(new Error(`${what}: ${error.message}`, { cause: error }), { code, [ANNOTATED]: true })
}

/** The error a statement failed with, as a connection failure (08006) when the connection under it was lost. */
export function asConnectionFailure(error: unknown): unknown {
  return annotate(error, CONNECTION_FAILURE, 'the connection to PostgreSQL was lost')
}

/** The error a connection attempt failed with, as 08001 when it is not the server's answer (a refused or timed-out socket). */
export function asConnectFailure(error: unknown): unknown {
  return annotate(error, UNABLE_TO_CONNECT, 'no connection to PostgreSQL')
}

/** The driver's own error under an annotation of ours (to name the errno: "connection refused"), else the error itself. */
export function driverError(error: unknown): unknown {
  return (error as Record<symbol, unknown> | undefined)?.[ANNOTATED] === true ? (error as Error).cause : error
}

/** pgModule.Client with the annotations above on connect and on every promise a query returns (pg-pool's Client option). */
export function stateClientClass(pgModule: typeof pg): typeof pg.Client {
  const query = pgModule.Client.prototype.query as (...args: unknown[]) => unknown
  const connect = pgModule.Client.prototype.connect as (
    callback?: (error: Error | undefined) => void,
  ) => Promise<void> | undefined
  class StateClient extends pgModule.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config)
      // Checked out, a client has no listener of pg-pool's: a connection the server ends between two
      // statements would be an unhandled 'error'. Its next statement fails as a lost connection instead.
      this.on('error', () => undefined)
    }
  }
  Object.defineProperty(StateClient.prototype, 'query', {
    configurable: true,
    writable: true,
    value: function (this: pg.Client, ...args: unknown[]): unknown {
      // pg-pool's own query() passes a callback: it gets the annotated error too (and drops the client for it).
      const last = args.at(-1)
      if (typeof last === 'function')
        args[args.length - 1] = (error: unknown, ...rest: unknown[]) =>
          (last as (...a: unknown[]) => unknown)(error ? asConnectionFailure(error) : error, ...rest)
      const result = query.apply(this, args)
      // A Submittable (a cursor) returns no promise: its caller sees the raw error.
      return result instanceof Promise
        ? result.catch((error: unknown) => {
            throw asConnectionFailure(error)
          })
        : result
    },
  })
  Object.defineProperty(StateClient.prototype, 'connect', {
    configurable: true,
    writable: true,
    // pg-pool connects with a callback; a client used alone, with a promise.
    value: function (this: pg.Client, callback?: (error: Error | undefined) => void): Promise<void> | undefined {
      if (typeof callback === 'function')
        return connect.call(this, (error) => callback(error ? (asConnectFailure(error) as Error) : error))
      return connect.call(this)!.catch((error: unknown) => {
        throw asConnectFailure(error)
      })
    },
  })
  return StateClient
}
