// Recognising PostgreSQL and connection errors by SQLSTATE (`code`) and `constraint`,
// never by message text, and turning connection failures into coded errors.
import { environmentFailure } from '../checks/environment-failures.js'
import { FleetkitError } from '../checks/fleetkit-error.js'
import { isServerFailure, SQLSTATE, sqlState } from '../checks/sqlstate.js'
import { driverError } from './state-client.js'

export { describeSqlState, isConnectionError, isServerFailure, SQLSTATE, sqlState } from '../checks/sqlstate.js'

interface PgErrorFields {
  code?: string
  constraint?: string
  table?: string
  severity?: string
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  return (
    sqlState(error) === SQLSTATE.uniqueViolation &&
    (constraint === undefined || (error as PgErrorFields).constraint === constraint)
  )
}

/** Serialization failures and deadlocks: the transaction may simply be run again. */
export function isRetryableTransactionError(error: unknown): boolean {
  const state = sqlState(error)
  return state === SQLSTATE.serializationFailure || state === SQLSTATE.deadlockDetected
}

/**
 * The coded error for a failure while connecting to `redactedUrl`. Called only on the
 * connect path, so an error without a SQLSTATE (a socket error, a timeout, a dropped
 * connection) means the server was not reachable. A server that answered but failed the new
 * session for a reason of its own (class 53, 58, XX) gets the code a statement's failure gets.
 */
export function connectFailure(
  annotated: unknown,
  redactedUrl: string,
  source: 'embedded' | 'DATABASE_URL',
): FleetkitError {
  // The driver's own error names the reason ("connection refused"); the annotation only classified it.
  const error = driverError(annotated)
  const state = sqlState(error)
  const reason = describeReason(error)
  if (state === SQLSTATE.invalidPassword || state === SQLSTATE.invalidAuthorization) {
    return new FleetkitError('STATE_AUTH_REFUSED', `PostgreSQL at ${redactedUrl} refused the login (${state})`, {
      actions:
        source === 'embedded'
          ? [
              'the password file in the state directory does not match the embedded server: restore it, or move the state directory aside to start over',
            ]
          : ['correct the user and password in DATABASE_URL', 'fleetkit db status'],
      data: { url: redactedUrl, sqlstate: state },
      cause: error,
    })
  }
  // Reached, but the new backend failed: on a full disk it cannot write its relcache init file (53100).
  // STATE_DISK_FULL, as for a statement: "unreachable" would advise stopping a server that cannot start again.
  const failed = isServerFailure(error) ? environmentFailure(error as Error) : undefined
  if (failed)
    return new FleetkitError(failed.code, failed.message, {
      actions: failed.actions,
      data: { url: redactedUrl, ...failed.data },
      cause: error,
    })
  const hint =
    source === 'embedded'
      ? ['fleetkit db status', 'fleetkit db stop, then run the command again to restart the embedded server']
      : ['check that the server in DATABASE_URL is running and reachable from this machine', 'fleetkit db status']
  return new FleetkitError('STATE_UNREACHABLE', `cannot reach PostgreSQL at ${redactedUrl}: ${reason}`, {
    actions: hint,
    data: {
      url: redactedUrl,
      ...(state ? { sqlstate: state } : {}),
      ...(errnoOf(error) ? { errno: errnoOf(error) } : {}),
    },
    cause: error,
  })
}

function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code
  return typeof code === 'string' && sqlState(error) === undefined ? code : undefined
}

function describeReason(error: unknown): string {
  const state = sqlState(error)
  if (state === SQLSTATE.invalidCatalogName) return 'the database does not exist (3D000)'
  if (state === SQLSTATE.cannotConnectNow) return 'the server is starting up or shutting down (57P03)'
  if (state) return `server error ${state}`
  const errno = errnoOf(error)
  if (errno === 'ECONNREFUSED') return 'connection refused'
  if (errno === 'ENOTFOUND' || errno === 'EAI_AGAIN') return 'host name not found'
  if (errno === 'ETIMEDOUT') return 'connection timed out'
  if (errno) return errno
  return 'the connection failed or timed out'
}

/**
 * A connection string with its password replaced by `***`, safe to print. A string
 * that is not a URL is not shown at all: it might be a key=value string with a password.
 * Neither is a URL whose password would spill out of the userinfo (see below).
 */
export function redactDatabaseUrl(url: string): string {
  // A password with an unencoded '/', '?' or '#' ends the authority early, and URL parsing
  // then puts the rest of it in the path, query or fragment: such a string is not shown.
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(url)
  if (!authority || url.includes('@', authority[0].length)) return NOT_SHOWN
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    // libpq URLs have no fragment; whatever is there is not fleetkit's to show.
    parsed.hash = ''
    for (const key of [...parsed.searchParams.keys()]) {
      if (/pass|secret|key|token/i.test(key)) parsed.searchParams.set(key, '***')
    }
    return parsed.toString().replace('%2A%2A%2A', '***')
  } catch {
    return NOT_SHOWN
  }
}

const NOT_SHOWN = '(DATABASE_URL not shown: not a URL whose password can be hidden)'
