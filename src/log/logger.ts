// The one logger of every fleetkit process (gateway, agent, CLI): pino JSON lines with the same
// fields (time, level, component, msg), FLEETKIT_LOG_LEVEL, and secret-named fields redacted.
import pino from 'pino'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error'
const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error']
const DEFAULT_LOG_LEVEL: LogLevel = 'info'
const LOG_LEVEL_ENV = 'FLEETKIT_LOG_LEVEL'

/** Which process wrote a line: one field tells a gateway's journal from an agent's. */
export type LogComponent = 'gateway' | 'agent' | 'cli'

/** `msg` is a stable event name (`heartbeat`, `certificate_renewed`); fields are snake_case facts. */
export type Logger = ((level: LogLevel, msg: string, fields?: Record<string, unknown>) => void) & {
  /** Whether a line of this level would be written; absent means yes. Hot paths ask before building fields. */
  enabled?: (level: LogLevel) => boolean
}

/** Whether `logger` writes `level` lines: a request path skips building a line nobody reads. */
export function logEnabled(logger: Logger, level: LogLevel): boolean {
  return logger.enabled?.(level) ?? true
}

/**
 * Fields removed before a line is written. Callers pass only safe fields; this is the second
 * line of defence for a field whose name says it holds a secret, at the top level or one below.
 */
const REDACTED_FIELDS: readonly string[] = [
  'secret',
  'enrollment_secret',
  'token',
  'password',
  'key',
  'key_pem',
  'keyPem',
  'private_key',
  'authorization',
  'database_url',
  'databaseUrl',
]
const REDACT_PATHS = REDACTED_FIELDS.flatMap((field) => [field, `*.${field}`])

export interface LoggerOptions {
  component: LogComponent
  /** Reads FLEETKIT_LOG_LEVEL; `level` wins when both are given. */
  env?: Readonly<Record<string, string | undefined>>
  level?: LogLevel
  /** Where lines go: 1 (stdout) or 2 (stderr), written synchronously; or a sink (tests). */
  destination?: 1 | 2 | { write(line: string): void }
  now?: () => Date
}

/** The level FLEETKIT_LOG_LEVEL names, or `invalid` with what was given (the caller warns once). */
export function logLevelFromEnv(env: Readonly<Record<string, string | undefined>>): {
  level: LogLevel
  invalid?: string
} {
  const raw = env[LOG_LEVEL_ENV]?.trim().toLowerCase()
  if (!raw) return { level: DEFAULT_LOG_LEVEL }
  return (LOG_LEVELS as readonly string[]).includes(raw)
    ? { level: raw as LogLevel }
    : { level: DEFAULT_LOG_LEVEL, invalid: env[LOG_LEVEL_ENV] }
}

export function createLogger(options: LoggerOptions): Logger {
  const fromEnv = logLevelFromEnv(options.env ?? {})
  const level = options.level ?? fromEnv.level
  const now = options.now ?? (() => new Date())
  const target = options.destination ?? 1
  // No transport: a transport starts a worker thread, which the single-file agent bundle cannot carry.
  const stream = typeof target === 'number' ? pino.destination({ dest: target, sync: true }) : target
  const instance = pino(
    {
      level,
      base: { component: options.component },
      messageKey: 'msg',
      timestamp: () => `,"time":"${now().toISOString()}"`,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    stream,
  )
  const logger: Logger = (lineLevel, msg, fields) => {
    if (fields) instance[lineLevel](fields, msg)
    else instance[lineLevel](msg)
  }
  logger.enabled = (lineLevel) => instance.isLevelEnabled(lineLevel)
  if (options.level === undefined && fromEnv.invalid !== undefined) {
    logger('warn', 'log_level_invalid', {
      setting: LOG_LEVEL_ENV,
      given: fromEnv.invalid,
      using: level,
      accepted: LOG_LEVELS,
    })
  }
  return logger
}

export const silentLogger: Logger = Object.assign(() => {}, { enabled: () => false })

/** A logger that keeps parsed lines, for tests that assert on what was logged. */
export function memoryLogger(
  component: LogComponent = 'agent',
  level: LogLevel = 'debug',
  now?: () => Date,
): Logger & { lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = []
  const logger = createLogger({
    component,
    level,
    now,
    destination: {
      write: (line) => {
        lines.push(JSON.parse(line) as Record<string, unknown>)
      },
    },
  })
  return Object.assign(logger, { lines })
}
