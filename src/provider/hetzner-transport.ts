// One Hetzner Cloud API call over HTTP: the bearer token, the shared rate budget (wait before
// sending, learn from every response, honour a 429), and retries of idempotent calls only.
import { FleetkitError } from '../checks/fleetkit-error.js'
import type { Clock } from '../config/clock.js'
import { type Rng, unitInterval } from '../config/rng.js'
import type { Logger } from '../log/logger.js'
import { assertTokenSafeEndpoint } from './api-endpoint.js'
import type { ApiToken } from './api-token.js'
import { parseApiFailure, providerError, unavailableError } from './hetzner-errors.js'
import type { RateBudget, RateObservation } from './rate-budget.js'

export const DEFAULT_HETZNER_API_URL = 'https://api.hetzner.cloud/v1'

/** The spec's bound: an idempotent call is sent at most this many times when 5xx or the transport fails. */
const MAX_ATTEMPTS = 4
const BACKOFF_BASE_MS = 500
const BACKOFF_CAP_MS = 8_000
/**
 * The largest answer read (counted as it streams in, after decompression): a full page of 50 servers
 * is well under 1 MiB, so anything past this is not an answer worth the memory; the request is aborted.
 */
export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024

export interface TransportOptions {
  token: ApiToken
  budget: RateBudget
  /** Default https://api.hetzner.cloud/v1; the stub's URL in tests and demos. */
  baseUrl?: string
  fetch?: typeof fetch
  clock: Clock
  /** Waits `ms` (budget, 429, backoff); tests pass one that advances their clock. */
  sleep: (ms: number) => Promise<void>
  rng: Rng
  /** One request's limit before it counts as a transport failure (ambiguous for a create). */
  requestTimeoutMs?: number
  /** Longest total wait for the budget (429s included) before PROVIDER_RATE_LIMITED. */
  maxRateWaitMs?: number
  log?: Logger
}

export interface CallOptions {
  query?: Record<string, string | number | readonly (string | number)[] | undefined>
  body?: unknown
  /** GETs, DELETEs and POSTs whose repetition changes nothing (set_rules): retried on 5xx and transport errors. */
  idempotent: boolean
}

export class HetznerTransport {
  private readonly baseUrl: string
  private readonly fetch: typeof fetch
  private readonly timeoutMs: number
  private readonly maxRateWaitMs: number

  constructor(private readonly options: TransportOptions) {
    this.baseUrl = apiRoot(options.baseUrl ?? DEFAULT_HETZNER_API_URL)
    this.fetch = options.fetch ?? globalThis.fetch
    this.timeoutMs = options.requestTimeoutMs ?? 30_000
    this.maxRateWaitMs = options.maxRateWaitMs ?? 15 * 60_000
  }

  /**
   * Sends `method path`: resolves with the parsed body of a 2xx (null when empty; the caller reads it
   * before use, hetzner-readers.ts), undefined for a 404 when `allowNotFound`; throws the mapped
   * FleetkitError otherwise. The token appears in no error it throws.
   */
  async call(method: string, path: string, call: CallOptions, allowNotFound = false): Promise<unknown> {
    const what = `${method} ${path}`
    const url = this.url(path, call.query)
    let attempt = 0
    let rateWaitedMs = 0
    for (;;) {
      rateWaitedMs += await this.awaitBudget(what, rateWaitedMs)
      attempt++
      const outcome = await this.send(method, url, call.body)
      // Why this attempt gave no usable answer; only 5xx, transport failures and unreadable 2xx get here.
      let reason: string
      if (outcome.kind === 'too_large') {
        await this.observe(outcome.response)
        this.log('debug', 'provider_response_too_large', { call: what, status: outcome.response.status, attempt })
        // Never sent again: the same call would be answered the same way, and read into memory again.
        throw tooLargeError(method, path, outcome.response.status, !call.idempotent)
      }
      if (outcome.kind === 'response') {
        const { response, text } = outcome
        await this.observe(response)
        // Routine traffic: debug only. The path and status, never a header (the token is one).
        this.log('debug', 'provider_request', {
          call: what,
          status: response.status,
          attempt,
          ratelimit_remaining: response.headers.get('ratelimit-remaining'),
        })
        if (response.ok) {
          const body = parseJson(text)
          if (body.ok) return body.value
          // Taken for a lost answer: a create behind it may have happened.
          reason = `HTTP ${response.status} with a body that is not JSON`
        } else {
          if (response.status === 404 && allowNotFound) return undefined
          const failure = parseApiFailure(response.status, text, response.headers.get('x-correlation-id') ?? undefined)
          failure.message = this.options.token.redact(failure.message)
          if (response.status === 429) {
            // Refused before it was processed: sending it again is safe for any call, a create too.
            const untilMs = this.retryAt(response)
            this.log('debug', 'provider_rate_limited', { call: what, wait_ms: untilMs - this.now() })
            await this.options.budget.block(untilMs)
            attempt--
            continue
          }
          if (response.status < 500) throw providerError(failure, what)
          reason = `HTTP ${failure.status} ${failure.apiCode}: ${failure.message}`
        }
      } else {
        reason = this.options.token.redact(outcome.reason)
      }
      if (!call.idempotent || attempt >= MAX_ATTEMPTS) throw unavailableError(what, reason, attempt, this.baseUrl)
      const backoffMs = this.backoffMs(attempt)
      this.log('debug', 'provider_retry', { call: what, attempt, wait_ms: backoffMs })
      await this.options.sleep(backoffMs)
    }
  }

  private now(): number {
    return this.options.clock.now().getTime()
  }

  private url(path: string, query: CallOptions['query']): string {
    const params = new URLSearchParams()
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value === undefined) continue
      for (const one of Array.isArray(value) ? value : [value]) params.append(key, String(one))
    }
    const search = params.toString()
    return `${this.baseUrl}${path}${search === '' ? '' : `?${search}`}`
  }

  /** Waits until the budget lets one request out; returns how long it waited. */
  private async awaitBudget(what: string, alreadyWaitedMs: number): Promise<number> {
    let waited = 0
    for (;;) {
      const waitMs = await this.options.budget.take(this.now())
      if (waitMs <= 0) return waited
      if (alreadyWaitedMs + waited + waitMs > this.maxRateWaitMs) {
        throw new FleetkitError(
          'PROVIDER_RATE_LIMITED',
          `the Hetzner Cloud request budget is spent; ${what} would wait ${Math.ceil((alreadyWaitedMs + waited + waitMs) / 1000)} s, longer than ${Math.round(this.maxRateWaitMs / 1000)} s`,
          { actions: ['run it again once the budget refilled (about one request a second)'], data: { waitMs } },
        )
      }
      await this.options.sleep(waitMs)
      waited += waitMs
    }
  }

  private async send(
    method: string,
    url: string,
    body: unknown,
  ): Promise<
    | { kind: 'response'; response: Response; text: string }
    | { kind: 'too_large'; response: Response }
    | { kind: 'transport'; reason: string }
  > {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), this.timeoutMs)
    try {
      const response = await this.fetch(url, {
        method,
        headers: {
          authorization: this.options.token.authorization(),
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: controller.signal,
      })
      const text = await readCapped(response, MAX_RESPONSE_BYTES)
      if (text === undefined) {
        controller.abort() // the rest of the body is never read: the connection goes with it
        return { kind: 'too_large', response }
      }
      return { kind: 'response', response, text }
    } catch (error) {
      const reason = controller.signal.aborted ? `no answer within ${this.timeoutMs} ms` : transportReason(error)
      return { kind: 'transport', reason }
    } finally {
      clearTimeout(timer)
    }
  }

  private async observe(response: Response): Promise<void> {
    const observation = rateObservation(response.headers)
    if (observation) await this.options.budget.observe(observation, this.now())
  }

  /**
   * When a 429 may be followed: Retry-After when present (not documented, honoured), else RateLimit-Reset;
   * never sooner than a second, so a 429 without either cannot turn into a busy loop.
   */
  private retryAt(response: Response): number {
    const now = this.now()
    return Math.max(now + 1000, this.retryHeaderAt(response, now))
  }

  private retryHeaderAt(response: Response, now: number): number {
    const retryAfter = Number(response.headers.get('retry-after'))
    if (response.headers.get('retry-after') !== null && Number.isFinite(retryAfter) && retryAfter >= 0) {
      return now + retryAfter * 1000
    }
    const reset = Number(response.headers.get('ratelimit-reset'))
    if (Number.isFinite(reset) && reset * 1000 > now) return reset * 1000
    return now + 1000
  }

  /** Exponential with jitter over the upper half: base·2ⁿ⁻¹ capped, drawn from [half, whole]. */
  private backoffMs(failedAttempts: number): number {
    const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (failedAttempts - 1))
    return Math.round(ceiling / 2 + (unitInterval(this.options.rng) * ceiling) / 2)
  }

  private log(level: 'debug', msg: string, fields: Record<string, unknown>): void {
    this.options.log?.(level, msg, fields)
  }
}

/** The RateLimit-* headers of a response, when all three are there and numeric. */
function rateObservation(headers: Headers): RateObservation | undefined {
  const limit = Number(headers.get('ratelimit-limit') ?? NaN)
  const remaining = Number(headers.get('ratelimit-remaining') ?? NaN)
  const reset = Number(headers.get('ratelimit-reset') ?? NaN)
  if (![limit, remaining, reset].every(Number.isFinite)) return undefined
  return { limit, remaining, resetAtMs: reset * 1000 }
}

/** The API root without a trailing slash; anything but a plain http(s) URL is a usage error, not a failed call. */
function apiRoot(text: string): string {
  let url: URL | undefined
  try {
    url = new URL(text)
  } catch {
    url = undefined
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.username || url.password || url.search || url.hash) {
    // Not echoed: a URL with user:password in it would print them.
    throw new FleetkitError('USAGE_INVALID', 'the API URL (--api-url, HETZNER_API_URL) is not a plain http(s) URL', {
      actions: [`fleetkit provider check --api-url ${DEFAULT_HETZNER_API_URL}`],
    })
  }
  assertTokenSafeEndpoint(url)
  return url.href.replace(/\/+$/, '')
}

/**
 * The body as text, read chunk by chunk; undefined as soon as it is past `limit` bytes (or says it
 * will be, in Content-Length), so an oversized answer costs at most `limit` bytes of memory.
 */
async function readCapped(response: Response, limit: number): Promise<string | undefined> {
  const declared = Number(response.headers.get('content-length') ?? NaN)
  const body = response.body
  if (Number.isFinite(declared) && declared > limit) {
    await body?.cancel().catch(() => {})
    return undefined
  }
  if (!body) return ''
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > limit) {
      await reader.cancel().catch(() => {})
      return undefined
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function tooLargeError(method: string, path: string, status: number, ambiguous: boolean): FleetkitError {
  const mib = MAX_RESPONSE_BYTES / (1024 * 1024)
  return new FleetkitError(
    'PROVIDER_RESPONSE_TOO_LARGE',
    `Hetzner Cloud's answer to ${method} ${path} (HTTP ${status}) is larger than ${mib} MiB; fleetkit stopped reading it` +
      (ambiguous ? '; the request may have taken effect' : ''),
    {
      actions: [
        'check that the API URL (--api-url, HETZNER_API_URL) is the Hetzner Cloud API, not a proxy or another service',
        'run it again (a create is looked up by its fleetkit.node_id label first, never sent blindly twice)',
      ],
      data: { method, path, status, limitBytes: MAX_RESPONSE_BYTES, ambiguous },
    },
  )
}

/** An empty body (a 204) is null: undefined is kept for a 404 the caller allowed. */
function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text === '') return { ok: true, value: null }
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch {
    return { ok: false }
  }
}

/** A transport failure in a few words (undici puts the errno on the cause): never headers. */
function transportReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause
  if (typeof cause?.code === 'string') return `connection failed (${cause.code})`
  return `connection failed (${error instanceof Error ? error.message.slice(0, 120) : 'unknown'})`
}
