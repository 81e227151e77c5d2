// The JSON-over-HTTPS plumbing of the gateway: size-bounded body reading, JSON replies
// that always carry server_time, and the HTTP status of each refusal code.
import type { FileHandle } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { pipeline } from 'node:stream/promises'

import { FleetkitError, toFleetkitError } from '../../checks/fleetkit-error.js'
import type { FailureCode } from '../../checks/failure-codes.js'

const MAX_BODY_BYTES = 64 * 1024

/**
 * How far past its limit a body without a Content-Length (chunked) is still read, and dropped, before the
 * 413: to its end, so that the connection closes with nothing unread and the client gets the answer. A
 * socket closed with unread input sends a reset, which discards the 413 the client had not read yet.
 */
const DRAIN_FACTOR = 16

/** The HTTP status for each code a route may refuse with; anything else is a 500. */
const HTTP_STATUS: Partial<Record<FailureCode, number>> = {
  REQUEST_INVALID: 400,
  ENROLLMENT_CSR_INVALID: 400,
  RENEWAL_CSR_INVALID: 400,
  ENROLLMENT_REFUSED: 401,
  CERTIFICATE_REFUSED: 401,
  NODE_NOT_ACTIVE: 403,
  NODE_LOST: 403,
  OPERATOR_REFUSED: 403,
  NODE_UNKNOWN: 404,
  ALLOCATION_UNKNOWN: 404,
  NODE_NOT_SCHEDULABLE: 409,
  ALLOCATION_OVER_CAPACITY: 409,
  ROUTE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  LEASE_CONFLICT: 409,
  RENEWAL_NOT_DUE: 409,
  RATE_LIMITED: 429,
  STATE_UNAVAILABLE: 503,
  GATEWAY_OVERLOADED: 503,
  RECOVERY_REFUSED: 401,
  RECOVERY_WINDOW_EXPIRED: 403,
  ISSUING_CA_RETIRED: 503,
  RELEASE_NOT_FOUND: 404,
}

function httpStatusOf(code: FailureCode): number {
  return HTTP_STATUS[code] ?? 500
}

/**
 * The request's body as a JSON object, at most `limit` bytes. One promise, settled with the parsed body:
 * not an async function awaiting the text (two promises and a turn more on every heartbeat).
 */
export function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Record<string, unknown>> {
  try {
    const declared = Number(req.headers['content-length'] ?? 0)
    if (declared > limit) throw tooLarge(limit)
    const buffered = bufferedBodyText(req, limit)
    if (buffered !== undefined) return Promise.resolve(parseJsonBody(buffered))
  } catch (error) {
    return Promise.reject(error as Error)
  }
  return readBody(req, limit, parseJsonBody)
}

/**
 * The whole body when the HTTP parser has already taken all of it in (a small request arrives in one
 * read: by the time a route asks, it waits in the stream's buffer), else undefined. Read at once, without
 * the listeners of readBody: on a keep-alive heartbeat those were a measurable share of the gateway's work.
 */
function bufferedBodyText(req: IncomingMessage, limit: number): string | undefined {
  if (!req.complete || req.readableFlowing === true) return undefined
  // All of it arrived already: nothing to stop reading; the 413 closes the connection (request-handler).
  if (req.readableLength > limit) throw tooLarge(limit)
  const chunk = req.read() as Buffer | null
  return chunk === null ? '' : chunk.toString('utf8')
}

function parseJsonBody(text: string): Record<string, unknown> {
  if (text.trim() === '') return {}
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new FleetkitError('REQUEST_INVALID', 'the request body is not valid JSON')
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new FleetkitError('REQUEST_INVALID', 'the request body must be a JSON object')
  }
  // Only a \u escape puts either in a string (raw, a NUL is invalid JSON and a lone surrogate invalid
  // UTF-8, decoded as U+FFFD): bodies without one, every heartbeat among them, are not walked.
  if (text.includes('\\u') && holdsUnstorableText(parsed)) {
    throw new FleetkitError(
      'REQUEST_INVALID',
      'the request body holds a NUL character or an unpaired UTF-16 surrogate, which no field may carry',
    )
  }
  return parsed as Record<string, unknown>
}

// U+0000 and unpaired surrogates (with the u flag, a pair is one code point and does not match \p{Cs}).
// eslint-disable-next-line no-control-regex
const UNSTORABLE = /\u0000|\p{Cs}/u

/**
 * Whether any string or key of the parsed body holds text PostgreSQL refuses: NUL in text and jsonb, an
 * unpaired surrogate in jsonb (JSON.stringify writes it as an escape that jsonb's parser rejects). Refused at
 * the door, every route alike, rather than as a failed statement (a 500) after the route began. Iterative:
 * a 64 KiB body nests deeper than the call stack goes.
 */
function holdsUnstorableText(value: object): boolean {
  const pending: unknown[] = [value]
  while (pending.length > 0) {
    const item = pending.pop()
    if (typeof item === 'string') {
      if (UNSTORABLE.test(item)) return true
    } else if (item !== null && typeof item === 'object') {
      if (Array.isArray(item)) for (const inner of item as unknown[]) pending.push(inner)
      else
        for (const [key, inner] of Object.entries(item)) {
          if (UNSTORABLE.test(key)) return true
          pending.push(inner)
        }
    }
  }
  return false
}

/**
 * The body, at most `limit` bytes, while it still arrives, handed as text to `finish` (the JSON parse), whose
 * value or throw settles the one promise. Events rather than `for await` (the
 * async iterator was a measurable share of a heartbeat's cost); inline listeners settled once by a flag
 * rather than removed one by one (the request and its listeners go away together). No 'error' listener:
 * without one a broken request emits none, and 'close' before 'end' says it was cut off.
 *
 * A body past `limit` is too large (413), but read on and dropped up to DRAIN_FACTOR times the limit: to its
 * end when it ends by then, so that the 413 reaches the client. One longer than that gets the 413 there, and
 * the connection is closed once it is sent (request-handler sets connection: close).
 */
function readBody<T>(req: IncomingMessage, limit: number, finish: (text: string) => T): Promise<T> {
  if (req.complete && req.readableLength === 0) {
    try {
      return Promise.resolve(finish(''))
    } catch (error) {
      return Promise.reject(error as Error)
    }
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let settled = false
    req.on('data', (chunk: Buffer) => {
      if (settled) return
      size += chunk.length
      if (size <= limit) {
        chunks.push(chunk)
        return
      }
      chunks.length = 0
      if (size <= limit * DRAIN_FACTOR) return
      settled = true
      // Not destroyed here: that reset the connection before the 413 was written. Whatever still arrives
      // is dropped until the reply, sent with connection: close, ends the connection.
      reject(tooLarge(limit))
    })
    req.on('end', () => {
      if (settled) return
      settled = true
      if (size > limit) return reject(tooLarge(limit))
      try {
        resolve(finish(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8')))
      } catch (error) {
        reject(error as Error)
      }
    })
    req.on('close', () => {
      if (settled) return
      settled = true
      reject(new FleetkitError('REQUEST_INVALID', 'the request body was cut off'))
    })
  })
}

function tooLarge(limit: number): FleetkitError {
  return new FleetkitError('REQUEST_INVALID', `the request body is larger than ${limit} bytes`, {
    data: { httpStatus: 413 },
  })
}

/** A route's answer that is not JSON (the status page's HTML, script and style). */
export class RawReply {
  constructor(
    readonly contentType: string,
    readonly body: string,
    readonly headers: Record<string, string> = {},
  ) {}
}

export function sendRaw(res: ServerResponse, reply: RawReply): void {
  res.writeHead(200, {
    'content-type': reply.contentType,
    'content-length': Buffer.byteLength(reply.body),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...reply.headers,
  })
  res.end(reply.body)
}

/**
 * A route's answer that is a file (a published release's): the open file and its size, taken from
 * the open descriptor, so what is sent is that file whole even if it is replaced meanwhile.
 */
export class FileReply {
  constructor(
    readonly handle: FileHandle,
    readonly size: number,
    readonly contentType: string,
  ) {}
}

/**
 * Sends a FileReply: 200 with its content-length, then the file streamed (nothing for HEAD); the
 * handle is closed in every case. Resolves `sent`, or `aborted` when the client went away or the
 * read failed after the headers were out (the connection is then closed: a short body never looks whole).
 */
export async function sendFile(res: ServerResponse, reply: FileReply, head: boolean): Promise<'sent' | 'aborted'> {
  res.writeHead(200, {
    'content-type': reply.contentType,
    'content-length': reply.size,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  })
  if (head || reply.size === 0) {
    await reply.handle.close().catch(() => undefined)
    res.end()
    return 'sent'
  }
  // autoClose: the stream closes the handle when it ends or fails.
  const stream = reply.handle.createReadStream({ start: 0, end: reply.size - 1, autoClose: true })
  try {
    await pipeline(stream, res)
    return 'sent'
  } catch {
    res.destroy()
    return 'aborted'
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: object,
  now: Date,
  headers?: Record<string, string>,
): void {
  const text = withServerTime(body, now)
  const head = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  }
  res.writeHead(status, headers ? { ...head, ...headers } : head)
  res.end(text)
}

/**
 * A JSON object answer serialized once and sent many times: a route whose answers repeat (every connected
 * node's heartbeat gets one of a few) keeps these instead of building and serializing an object per request.
 * Sent as sendJson sends the object itself, `server_time` added last.
 */
export class PreparedJson<T extends object> {
  /** The object's JSON without its closing brace, ready for `server_time`. */
  readonly open: string
  constructor(readonly value: T) {
    if (Object.hasOwn(value, 'server_time')) throw new Error('a prepared answer cannot carry its own server_time')
    const json = JSON.stringify(value)
    this.open = json === '{}' ? '{' : `${json.slice(0, -1)},`
  }
}

/**
 * The body's JSON with `server_time` added last. Appended to the text rather than spread into a copy:
 * the copy was a slow property definition and a slower stringify on every heartbeat.
 */
export function withServerTime(body: object, now: Date): string {
  if (body instanceof PreparedJson) return `${body.open}"server_time":"${isoTime(now)}"}`
  if (Object.hasOwn(body, 'server_time')) return JSON.stringify({ ...body, server_time: isoTime(now) })
  const json = JSON.stringify(body)
  const time = `"server_time":"${isoTime(now)}"}`
  return json === '{}' ? `{${time}` : `${json.slice(0, -1)},${time}`
}

/** now.toISOString(), kept for the millisecond it names: thousands of answers a second share a few. */
let lastIso = { ms: Number.NaN, text: '' }
function isoTime(now: Date): string {
  const ms = now.getTime()
  if (ms !== lastIso.ms) lastIso = { ms, text: now.toISOString() }
  return lastIso.text
}

export interface ErrorReply {
  status: number
  code: FailureCode
  body: Record<string, unknown>
  headers: Record<string, string>
}

/**
 * The reply for anything a route threw: a FleetkitError keeps its code (lowercased in the
 * body) and message; `data.body` adds fields, `data.retryAfterSeconds` a Retry-After header,
 * `data.headers` other headers (a 405's Allow).
 * Any other error is a 500 whose message is not revealed.
 */
export function errorReply(error: unknown): ErrorReply {
  const e = toFleetkitError(error)
  const data = e.data ?? {}
  const status = typeof data.httpStatus === 'number' ? data.httpStatus : httpStatusOf(e.code)
  const message = status === 500 ? 'the gateway failed to handle the request' : e.message
  const extra = (data.body ?? {}) as Record<string, unknown>
  const headers: Record<string, string> = { ...(data.headers as Record<string, string> | undefined) }
  if (typeof data.retryAfterSeconds === 'number') headers['retry-after'] = String(data.retryAfterSeconds)
  return { status, code: e.code, body: { ...extra, error: { code: e.code.toLowerCase(), message } }, headers }
}
