// Structured logs: one JSON object per line (time, level, msg, fields). Callers pass
// only safe fields; nothing here ever receives a secret, a key or DATABASE_URL.

export type LogLevel = 'info' | 'warn' | 'error'

export interface Logger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void
}

export function jsonLogger(write: (line: string) => void = (line) => process.stdout.write(line), now: () => Date = () => new Date()): Logger {
  return {
    log(level, msg, fields = {}) {
      write(`${JSON.stringify({ time: now().toISOString(), level, msg, ...fields })}\n`)
    },
  }
}

export const silentLogger: Logger = { log: () => undefined }
