// HTTPS JSON client for one gateway listener: keep-alive connections, the pinned CA,
// an optional client certificate (mTLS), and the skew between our clock and `server_time`.
import { Agent, request as httpsRequest } from 'node:https'

export interface TlsMaterial {
  ca: string
  cert?: string
  key?: string
}

export interface GatewayResponse {
  status: number
  /** Untrusted JSON: read it with the route's reader from src/protocol/. */
  body: unknown
  headers: Record<string, string | string[] | undefined>
  /** gateway time minus our clock at the request's midpoint, when the response carried `server_time` */
  skewMs: number | undefined
}

/** A failure below HTTP: refused connection, timeout, TLS handshake. `code` is Node's (ECONNREFUSED, CERT_HAS_EXPIRED, ...). */
export class GatewayTransportError extends Error {
  readonly code: string
  constructor(message: string, code: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'GatewayTransportError'
    this.code = code
  }
}

/** How many request timeouts a new connection's handshakes may take. */
const HANDSHAKE_TIMEOUT_FACTOR = 3

export interface GatewayClientOptions {
  timeoutMs: number
  now?: () => number
  maxSockets?: number
}

export class GatewayClient {
  readonly baseUrl: string
  private readonly agent: Agent
  private readonly timeoutMs: number
  private readonly now: () => number
  /**
   * The TLS session of the last new connection, offered by every new one. Node's Agent keeps one too but
   * drops it when a connection ends in an error, and a gateway restart resets kept connections: every
   * agent would then reconnect with a full handshake instead of a resumed one, in the storm where that
   * costs most. A session the gateway no longer accepts costs nothing but the full handshake.
   */
  private session: Buffer | undefined
  lastSkewMs: number | undefined

  constructor(baseUrl: string, tls: TlsMaterial, options: GatewayClientOptions) {
    this.baseUrl = baseUrl
    this.timeoutMs = options.timeoutMs
    this.now = options.now ?? Date.now
    this.agent = new Agent({
      keepAlive: true,
      maxSockets: options.maxSockets ?? 4,
      ca: tls.ca,
      cert: tls.cert,
      key: tls.key,
      minVersion: 'TLSv1.2',
    })
  }

  async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<GatewayResponse> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
    const started = this.now()
    const { status, headers, text } = await new Promise<{
      status: number
      headers: GatewayResponse['headers']
      text: string
    }>((resolve, reject) => {
      const req = httpsRequest(
        new URL(path, this.baseUrl),
        {
          method,
          agent: this.agent,
          ...(this.session ? { session: this.session } : {}),
          // A new connection gets longer for its TCP and TLS handshakes than a request on an open one:
          // when a whole fleet reconnects at once (a gateway restart) handshakes queue behind each other,
          // and one abandoned at the request timeout would wait out the backoff and start over.
          timeout: this.timeoutMs * HANDSHAKE_TIMEOUT_FACTOR,
          headers: {
            accept: 'application/json',
            ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              text: Buffer.concat(chunks).toString('utf8'),
            }),
          )
          res.on('error', (error) => reject(transportError(error)))
        },
      )
      let connected = false
      req.on('socket', (socket) => {
        if (!req.reusedSocket)
          socket.on('session', (session: Buffer) => {
            this.session = session
          })
        const open = () => {
          connected = true
          req.setTimeout(this.timeoutMs)
        }
        // A kept-alive connection is open already; a new one once its TLS handshake is done.
        if (req.reusedSocket) open()
        else socket.once('secureConnect', open)
      })
      req.on('timeout', () =>
        req.destroy(
          connected
            ? new GatewayTransportError(`no answer from ${this.baseUrl} within ${this.timeoutMs} ms`, 'ETIMEDOUT')
            : new GatewayTransportError(
                `no TLS connection to ${this.baseUrl} within ${this.timeoutMs * HANDSHAKE_TIMEOUT_FACTOR} ms`,
                'ETIMEDOUT',
              ),
        ),
      )
      req.on('error', (error) => reject(transportError(error)))
      req.end(payload)
    })
    const finished = this.now()
    let parsed: unknown = {}
    if (text !== '') {
      try {
        parsed = JSON.parse(text)
      } catch {
        parsed = { error: { code: 'not_json', message: text.slice(0, 200) } }
      }
    }
    const skewMs = skewFrom(parsed, started, finished)
    if (skewMs !== undefined) this.lastSkewMs = skewMs
    return { status, body: parsed, headers, skewMs }
  }

  /** Closes idle keep-alive sockets now; requests in flight finish on theirs. */
  close(): void {
    this.agent.destroy()
  }
}

export function skewFrom(body: unknown, startedMs: number, finishedMs: number): number | undefined {
  const serverTime = (body as { server_time?: unknown } | null)?.server_time
  if (typeof serverTime !== 'string') return undefined
  const at = Date.parse(serverTime)
  if (Number.isNaN(at)) return undefined
  return Math.round(at - (startedMs + finishedMs) / 2)
}

function transportError(error: Error): GatewayTransportError {
  if (error instanceof GatewayTransportError) return error
  const code = (error as NodeJS.ErrnoException).code ?? 'UNKNOWN'
  return new GatewayTransportError(error.message, code, { cause: error })
}
