// Structured logs: one JSON object per line on stderr, so journald keeps them whole.
// Callers pass only safe fields: never a key, a secret or a certificate body.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

export type Logger = (level: LogLevel, event: string, fields?: Record<string, unknown>) => void

export function jsonLogger(write: (line: string) => void = (line) => process.stderr.write(line), now: () => Date = () => new Date()): Logger {
  return (level, event, fields = {}) => {
    write(`${JSON.stringify({ ts: now().toISOString(), level, event, ...fields })}\n`)
  }
}

export const silentLogger: Logger = () => {}
