// A local HTTP server that behaves like the Hetzner Cloud API for what fleetkit uses: bearer auth,
// the RateLimit headers and real 429 bodies, injected faults, and a record of every request (no token).
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { type Clock, systemClock } from '../config/clock.js'
import type { HetznerErrorCode } from './hetzner-error-codes.js'
import { StubApi } from './stub-api.js'
import { apiError, type StubResponse } from './stub-errors.js'
import type { StubMachines } from './stub-machines.js'

export interface HetznerStubOptions {
  /** The one token the stub accepts (a random one by default). */
  token?: string
  /** 0 (the default) picks a free port. */
  port?: number
  host?: string
  /** Drives actions and the rate budget: a test's fixed clock finishes actions when it advances. */
  clock?: Clock
  /** How long an action runs before it reports success (default 2 s on the clock). */
  actionDurationMs?: number
  /** Requests an hour (RateLimit-Limit; the API's default 3,600) and how many are left at the start. */
  rateLimit?: { limit: number; remaining?: number }
  /** Send Retry-After on a 429 (the real API does not document it; the client must work either way). */
  retryAfter?: boolean
  /** Largest request body accepted (the API's is larger than user_data's 32 KiB). */
  maxBodyBytes?: number
  /** Real machines behind the API (`provider stub --boot`, src/provider/local-cloud/): closed with the stub. */
  machines?: StubMachines
}

/** A fault for the next matching requests: an error status, no answer at all, or a dropped connection. */
interface StubFault {
  method?: string
  /** Matches the path below the API root (`/servers`), as a prefix string or a pattern. */
  path: string | RegExp
  kind: 'status' | 'hang' | 'reset'
  /** For `status`: the HTTP status (default 503) and error code (default `unavailable`). */
  status?: number
  code?: HetznerErrorCode
  /** Carry out the request first (a create makes its server), then fail: an ambiguous failure. */
  afterEffect?: boolean
  /** How many requests it hits (default 1). */
  times?: number
}

/** One request as the stub saw it: never its headers, so never the token. */
interface RecordedRequest {
  method: string
  path: string
  query: Record<string, string[]>
  body: unknown
  /** The status answered; 0 when it was a hang or a reset. */
  status: number
  /** Whether the bearer token was the stub's. */
  authorized: boolean
  /** When it arrived, on the stub's clock (ms since the epoch). */
  atMs: number
}

export interface HetznerStub {
  /** The API root, `http://127.0.0.1:PORT/v1`. */
  url: string
  port: number
  token: string
  requests: RecordedRequest[]
  /** The resources, for tests to read and arrange (quota, sold-out types). */
  api: StubApi
  inject(fault: StubFault): void
  /** Sets the rate budget: `remaining` requests left now, refilling at `limit` an hour. */
  setRateLimit(limit: number, remaining?: number): void
  close(): Promise<void>
}

export async function startHetznerStub(options: HetznerStubOptions = {}): Promise<HetznerStub> {
  const clock = options.clock ?? systemClock
  const token = options.token ?? `stub-${randomBytes(16).toString('hex')}`
  const api = new StubApi(clock, options.actionDurationMs ?? 2000, options.machines)
  const requests: RecordedRequest[] = []
  const faults: (StubFault & { left: number })[] = []
  const sockets = new Set<Socket>()
  const maxBody = options.maxBodyBytes ?? 1024 * 1024
  let limit = options.rateLimit?.limit ?? 3600
  let remaining = options.rateLimit?.remaining ?? limit
  let budgetAtMs = clock.now().getTime()

  /** Refills at limit an hour on the clock, then takes one: false when none was left. */
  function takeOne(): boolean {
    const now = clock.now().getTime()
    remaining = Math.min(limit, remaining + ((now - budgetAtMs) * limit) / 3_600_000)
    budgetAtMs = now
    if (remaining < 1) return false
    remaining -= 1
    return true
  }

  function rateHeaders(): Record<string, string> {
    const now = clock.now().getTime()
    const untilFullMs = ((limit - remaining) * 3_600_000) / limit
    return {
      'ratelimit-limit': String(limit),
      'ratelimit-remaining': String(Math.floor(remaining)),
      'ratelimit-reset': String(Math.ceil((now + untilFullMs) / 1000)),
    }
  }

  function takeFault(method: string, path: string): StubFault | undefined {
    const index = faults.findIndex(
      (f) =>
        (f.method === undefined || f.method === method) &&
        (typeof f.path === 'string' ? path.startsWith(f.path) : f.path.test(path)),
    )
    if (index < 0) return undefined
    const fault = faults[index]!
    if (--fault.left <= 0) faults.splice(index, 1)
    return fault
  }

  function send(res: ServerResponse, answer: StubResponse, headers: Record<string, string>): void {
    // 204 (a deleted volume) has no body.
    const text = answer.status === 204 ? '' : JSON.stringify(answer.body)
    res.writeHead(answer.status, {
      'content-type': 'application/json',
      'x-correlation-id': randomBytes(8).toString('hex'),
      ...headers,
    })
    res.end(text)
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stub')
    const method = req.method ?? 'GET'
    const path = url.pathname.replace(/^\/v1(?=\/|$)/, '')
    const text = await readBody(req, maxBody)
    let body: unknown
    let answer: StubResponse | undefined
    try {
      body = text === '' ? undefined : JSON.parse(text)
    } catch {
      answer = apiError(400, 'json_error', 'request body is not valid JSON')
    }
    const authorized = req.headers.authorization === `Bearer ${token}`
    const record: RecordedRequest = {
      method,
      path,
      query: queryOf(url.searchParams),
      body,
      status: 0,
      authorized,
      atMs: clock.now().getTime(),
    }
    requests.push(record)
    if (!authorized) {
      record.status = 401
      return send(res, apiError(401, 'unauthorized', 'unable to authenticate'), {})
    }
    if (!takeOne()) {
      const headers = rateHeaders()
      record.status = 429
      // Until one request is back: the refill of what is missing at limit an hour.
      const oneBackS = Math.ceil(((1 - remaining) * 3600) / limit)
      const retryAfter: Record<string, string> = options.retryAfter ? { 'retry-after': String(oneBackS) } : {}
      return send(res, apiError(429, 'rate_limit_exceeded', 'limit of requests per hour reached'), {
        ...headers,
        ...retryAfter,
      })
    }
    const fault = takeFault(method, path)
    if (!answer && (!fault || fault.afterEffect)) answer = api.handle({ method, path, query: url.searchParams, body })
    if (fault) {
      if (fault.kind === 'reset') return void req.socket.destroy()
      if (fault.kind === 'hang') return // never answered: the client's timeout ends it, or close() does
      answer = apiError(fault.status ?? 503, fault.code ?? 'unavailable', 'injected fault')
    }
    record.status = answer!.status
    send(res, answer!, rateHeaders())
  }

  const server = createServer((req, res) => {
    serve(req, res).catch(() => {
      if (!res.headersSent) send(res, apiError(500, 'server_error', 'stub failure'), {})
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new FleetkitError(
          'PROVIDER_STUB_BIND_FAILED',
          `the Hetzner Cloud stub could not listen on port ${options.port ?? 0} (${error.code ?? error.message})`,
          { actions: ['fleetkit provider stub --port 0   (any free port)'], data: { port: options.port ?? 0 } },
        ),
      ),
    )
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve())
  })
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  const host = options.host ?? '127.0.0.1'

  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`,
    port,
    token,
    requests,
    api,
    inject: (fault) => faults.push({ ...fault, left: fault.times ?? 1 }),
    setRateLimit: (newLimit, newRemaining) => {
      limit = newLimit
      remaining = newRemaining ?? newLimit
      budgetAtMs = clock.now().getTime()
    },
    close: async () => {
      await new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
      await options.machines?.close()
    },
  }
}

function queryOf(params: URLSearchParams): Record<string, string[]> {
  const query: Record<string, string[]> = {}
  for (const [key, value] of params) (query[key] ??= []).push(value)
  return query
}

function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let length = 0
    req.on('data', (chunk: Buffer) => {
      length += chunk.length
      if (length > maxBytes) {
        req.destroy()
        reject(new Error('request body too large'))
      } else chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}
