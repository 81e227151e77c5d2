// Limits on each TLS listener: connections in total and per source address (and, on the
// unauthenticated enrollment listener, an idle timeout), so idle or slow clients from one place
// cannot take the descriptors the other listener, the database pool and the PKI reload need
// (under systemd's default 1,024 they would). The TLS handshake deadline is the server's option.
import type { Server as HttpsServer } from 'node:https'
import type { Socket } from 'node:net'

export interface SourceLimits {
  /** Open connections on the listener at most; more are closed as they are accepted. */
  maxConnections: number
  /** Open connections from one source address at most. */
  maxPerSource: number
}

export interface ConnectionLimits extends SourceLimits {
  /** A connection idle this long (no request, no bytes) is closed. */
  idleTimeoutMs: number
}

/** Why a connection was closed early (a metric label). */
export type ConnectionRefusal = 'total_cap' | 'source_cap' | 'idle'

/**
 * Apply the limits to `server` (the handshake deadline is the server's `handshakeTimeout` option).
 * Returns how many connections each source holds now, for /metrics and tests.
 */
export function limitConnections(
  server: HttpsServer,
  limits: SourceLimits & { idleTimeoutMs?: number },
  onRefused: (reason: ConnectionRefusal) => void,
): { open(): number; sources(): number } {
  const perSource = new Map<string, number>()
  let open = 0
  // Node closes connections above maxConnections itself, as soon as it accepts them.
  server.maxConnections = limits.maxConnections
  server.on('drop', () => onRefused('total_cap'))
  server.on('connection', (socket: Socket) => {
    const source = socket.remoteAddress ?? 'unknown'
    const count = (perSource.get(source) ?? 0) + 1
    if (count > limits.maxPerSource) {
      onRefused('source_cap')
      socket.destroy()
      return
    }
    perSource.set(source, count)
    open++
    socket.once('close', () => {
      open--
      const left = (perSource.get(source) ?? 1) - 1
      if (left <= 0) perSource.delete(source)
      else perSource.set(source, left)
    })
    // Idle before, during or between requests: the socket is closed, its descriptor freed.
    if (limits.idleTimeoutMs !== undefined)
      socket.setTimeout(limits.idleTimeoutMs, () => {
        onRefused('idle')
        socket.destroy()
      })
  })
  return { open: () => open, sources: () => perSource.size }
}
