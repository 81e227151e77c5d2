// Structured logs: one JSON object per line on stderr, so journald keeps them whole.
// Callers pass only safe fields: never a key, a secret or a certificate body.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

export type Logger = (level: LogLevel, event: string, fields?: Record<string, unknown>) => void

/** `debug` lines (one per heartbeat) are written only when asked for (FLEETKIT_DEBUG). */
export function jsonLogger(write: (line: string) => void = (line) => process.stderr.write(line), now: () => Date = () => new Date(), debug = true): Logger {
  return (level, event, fields = {}) => {
    if (level === 'debug' && !debug) return
    write(`${JSON.stringify({ ts: now().toISOString(), level, event, ...fields })}\n`)
  }
}

export const silentLogger: Logger = () => {}
