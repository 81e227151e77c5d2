// The pg Client class of every fleetkit pool. A statement that fails below SQL because the connection
// was lost under it ("Connection terminated unexpectedly", a reset socket) rejects with SQLSTATE 08006
// connection_failure, as JDBC reports it: the CLI (STATE_UNREACHABLE) and the gateway (503) then tell it
// by its code, never by node-postgres's message text. SQL errors and programming errors pass unchanged.
import type pg from 'pg'

import { sqlState } from './sqlstate.js'

const CONNECTION_FAILURE = '08006'

/** The error a statement failed with, as a connection failure when the connection under it was lost. */
export function asConnectionFailure(error: unknown): unknown {
  if (!(error instanceof Error) || sqlState(error) !== undefined || error instanceof TypeError || error instanceof RangeError) return error
  return Object.assign(new Error(`the connection to PostgreSQL was lost: ${error.message}`, { cause: error }), { code: CONNECTION_FAILURE })
}

/** pgModule.Client with asConnectionFailure on every promise a query returns (pg-pool's Client option). */
export function stateClientClass(pgModule: typeof pg): typeof pg.Client {
  const query = pgModule.Client.prototype.query as (...args: unknown[]) => unknown
  class StateClient extends pgModule.Client {}
  Object.defineProperty(StateClient.prototype, 'query', {
    configurable: true,
    writable: true,
    value: function (this: pg.Client, ...args: unknown[]): unknown {
      const result = query.apply(this, args)
      // A callback or a Submittable (a cursor) returns no promise: those callers see the raw error.
      return result instanceof Promise ? result.catch((error: unknown) => { throw asConnectionFailure(error) }) : result
    },
  })
  return StateClient
}
