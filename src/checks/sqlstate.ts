// PostgreSQL's error classes by SQLSTATE (an error's `code`), never by message text. In src/checks,
// below the store, because the error classification here (environment-failures.ts, shipped in the
// agent bundle too) reads it as much as the store does; no imports.

export const SQLSTATE = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  checkViolation: '23514',
  notNullViolation: '23502',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
  undefinedTable: '42P01',
  duplicateDatabase: '42P04',
  duplicateObject: '42710',
  invalidCatalogName: '3D000',
  invalidPassword: '28P01',
  invalidAuthorization: '28000',
  cannotConnectNow: '57P03',
  adminShutdown: '57P01',
  crashShutdown: '57P02',
  diskFull: '53100',
  tooManyConnections: '53300',
  queryCanceled: '57014',
  readOnlyTransaction: '25006',
} as const

/** Node's socket errors that mean "no server there" rather than "the server said no". */
const NETWORK_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ENOENT',
])

/**
 * The SQLSTATE of a server error, or undefined for anything that is not one. Five characters, and not
 * a five-letter errno (EPIPE, EROFS): no SQLSTATE class starts with E.
 */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code
  return typeof code === 'string' && /^[0-9A-DF-Z][0-9A-Z]{4}$/.test(code) ? code : undefined
}

/** True for failures of the connection itself (class 08, shutdowns, socket errors). */
export function isConnectionError(error: unknown): boolean {
  const state = sqlState(error)
  if (state !== undefined)
    return (
      state.startsWith('08') ||
      state === SQLSTATE.adminShutdown ||
      state === SQLSTATE.crashShutdown ||
      state === SQLSTATE.cannotConnectNow
    )
  const errno = (error as { code?: unknown } | undefined)?.code
  return typeof errno === 'string' && NETWORK_ERRNOS.has(errno)
}

/**
 * True when the server could not do the work for a reason of its own, not the request's: class 53
 * (its disk is full, out of memory, too many connections), 58 (an I/O or system error), XX (internal,
 * corrupted data), a read-only server (a standby) or a statement it cancelled (a timeout, an operator).
 */
export function isServerFailure(error: unknown): boolean {
  const state = sqlState(error)
  if (state === undefined) return false
  return (
    state.startsWith('53') ||
    state.startsWith('58') ||
    state.startsWith('XX') ||
    state === SQLSTATE.readOnlyTransaction ||
    state === SQLSTATE.queryCanceled
  )
}

/** The names of the SQLSTATEs isServerFailure and isConnectionError accept, for messages (PostgreSQL's own message may quote data). */
const CONDITION_NAMES: Record<string, string> = {
  '53000': 'insufficient_resources',
  '53100': 'disk_full',
  '53200': 'out_of_memory',
  '53300': 'too_many_connections',
  '53400': 'configuration_limit_exceeded',
  '58000': 'system_error',
  '58030': 'io_error',
  XX000: 'internal_error',
  XX001: 'data_corrupted',
  XX002: 'index_corrupted',
  '25006': 'read_only_sql_transaction',
  '57014': 'query_canceled',
  '57P01': 'admin_shutdown',
  '57P02': 'crash_shutdown',
  '57P03': 'cannot_connect_now',
  '08000': 'connection_exception',
  '08003': 'connection_does_not_exist',
  '08006': 'connection_failure',
}

/** `53100 disk_full`: the SQLSTATE and, when known, its condition name. */
export function describeSqlState(state: string): string {
  const name = CONDITION_NAMES[state]
  return name ? `${state} ${name}` : state
}
