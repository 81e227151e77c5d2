// The gateway's request path: route, the database guard, authentication, the handler, the
// JSON answer, and one metric and log line per request; and the loopback metrics listener.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { TLSSocket } from 'node:tls'
import type { FleetkitError } from '../../checks/fleetkit-error.js'
import { logEnabled, type LogLevel } from '../../log/logger.js'
import { countCertificatesExpiringBefore } from '../../store/pki/certificates.js'
import { restoreUnhealthyNode } from '../../store/nodes/sweep.js'
import type { GatewayContext } from './gateway-context.js'
import { errorReply, FileReply, RawReply, readJsonBody, sendFile, sendJson, sendRaw } from './http.js'
import type { ListenerName } from '../load/load-shedder.js'
import { type GaugeReading, labelKey } from '../metrics/metrics.js'
import type { AgentIdentity } from '../auth/agent-auth.js'
import type { RequestContext, Router } from './router.js'
import { STATE_RETRY_AFTER_SECONDS, stateUnavailable } from '../../store/state-guard.js'

export function errorText(error: unknown): string {
  const e = error as { code?: string; message?: string }
  return e.code ? `${e.code}: ${e.message ?? ''}` : (e.message ?? String(error))
}

/** What one listener's handler keeps between requests. */
interface Listening {
  listener: ListenerName
  router: Router
  g: GatewayContext
  /** Metric label keys and log levels by route, status and code, built once each instead of per request. */
  outcomes: Map<string, Outcome>
}

interface Outcome {
  metricKey: string
  level: LogLevel
}

export function requestHandler(listener: ListenerName, router: Router, g: GatewayContext) {
  const listening: Listening = { listener, router, g, outcomes: new Map() }
  return (req: IncomingMessage, res: ServerResponse): void => {
    void serveRequest(listening, req, res)
  }
}

/**
 * One request's context. A class, not an object literal with closures: the heartbeat path runs
 * thousands of times a second, and `body()` as a method costs no allocation per request.
 */
class Request implements RequestContext {
  params: Record<string, string> = NO_PARAMS
  identity: AgentIdentity | undefined = undefined
  private noted: { nodeId?: string } | undefined
  private peer: string | undefined
  constructor(
    readonly req: IncomingMessage,
    readonly now: Date,
  ) {}
  /** Made when a route writes to it (enrollment names its node), not for every heartbeat. */
  get note(): { nodeId?: string } {
    return (this.noted ??= {})
  }
  get notedNodeId(): string | undefined {
    return this.noted?.nodeId
  }
  /**
   * Read when a route or a log line needs it (rate limits, enrollment), not on every heartbeat; kept once read,
   * since a socket that closed before the log line was written no longer knows its peer.
   */
  get remote(): string {
    return (this.peer ??= this.req.socket.remoteAddress ?? 'unknown')
  }
  body(): Promise<Record<string, unknown>> {
    return readJsonBody(this.req)
  }
}
const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>

/** Route, shed, guard, authenticate, handle and answer one request; then count it and log it. */
async function serveRequest(l: Listening, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { g, listener } = l
  const started = performance.now()
  const now = g.clock.now()
  const url = req.url ?? '/'
  const query = url.indexOf('?')
  const path = query < 0 ? url : url.slice(0, query)
  const ctx = new Request(req, now)
  // Enrollments and release downloads are few and often end with their connection: their peer is read now,
  // for the log line. A heartbeat's connection stays open, so it is read only when logged.
  if (listener !== 'agent') void ctx.remote
  let routeName = 'unmatched'
  let status = 200
  let code: string | undefined
  let reason: unknown
  let release: (() => void) | undefined
  try {
    // Malformed requests (unknown path, other method, bad escapes) are refused before anything else.
    const match = l.router.resolve(req.method, path, listener)
    routeName = match.route.pattern
    ctx.params = match.params
    // Shed before any work (no database, no authentication, no body): a shed request wrote nothing.
    release = g.shedder.admit(listener, match.route.shedding ?? 'normal')
    // Every route needs the database (authentication reads certificate rows): while it is
    // down, answer 503 at once instead of letting requests queue for a connection.
    if (!g.database.available && match.route.needsDatabase !== false)
      throw stateUnavailable(
        'unreachable',
        undefined,
        routeName === '/healthz' ? { status: 'unavailable', database: 'down' } : {},
      )
    if (match.route.auth !== 'none') {
      const socket = req.socket as TLSSocket
      const mark = match.route.auth === 'mark'
      // A cached row needs no promise; only a look-up or a first use goes to the database.
      const identity = g.auth.knownIdentity(socket, now, mark) ?? (await g.auth.authenticate(socket, now, mark))
      ctx.identity = identity
      // An unhealthy node's authenticated request restores it (spec 06); the sweep judged it on the database's clock.
      if (identity.nodeStatus === 'unhealthy' && (await restoreUnhealthyNode(g.pool, identity.nodeId))) {
        g.auth.evictNode(identity.nodeId)
        identity.nodeStatus = 'active'
      }
    }
    const answer = await match.route.handler(ctx)
    if (answer instanceof FileReply) {
      // A file is streamed outside the in-flight count: the shedder bounds work, the connection limits bound transfers.
      release?.()
      release = undefined
      if ((await sendFile(res, answer, req.method === 'HEAD')) === 'aborted') reason = 'transfer_aborted'
    } else if (answer instanceof RawReply) sendRaw(res, answer)
    else sendJson(res, 200, answer, now)
  } catch (error) {
    const reply = errorReply(error)
    if (reply.status === 500)
      g.logger('error', 'request_failed', { listener, route: routeName, error: errorText(error) })
    if (reply.status === 413 || reply.status === 400) res.setHeader('connection', 'close')
    sendJson(res, reply.status, reply.body, now, reply.headers)
    status = reply.status
    code = reply.code
    reason = (error as FleetkitError).data?.reason
  } finally {
    release?.()
  }
  const seconds = (performance.now() - started) / 1000
  const outcome = outcomeOf(l, routeName, status, code)
  g.metrics.requests.incKey(outcome.metricKey)
  g.metrics.requestSeconds.observe(seconds)
  const level = outcome.level
  // Routine traffic logs at debug: at info the line is never built (thousands a second under load).
  if (!logEnabled(g.logger, level)) return
  const nodeId = ctx.identity?.nodeId ?? ctx.notedNodeId
  g.logger(level, 'request', {
    listener,
    method: req.method,
    route: routeName,
    status,
    ms: Math.round(seconds * 10000) / 10,
    remote: ctx.remote,
    ...(nodeId ? { node_id: nodeId } : {}),
    ...(code ? { code } : {}),
    ...(reason ? { reason } : {}),
  })
}

/** A request's metric label key and log level, worked out once per route, status and code. */
function outcomeOf(l: Listening, route: string, status: number, code: string | undefined): Outcome {
  // Route patterns hold no spaces: `route` alone is the key of a 200 and cannot meet another's.
  const cacheKey = status === 200 && code === undefined ? route : `${route} ${status} ${code ?? ''}`
  let outcome = l.outcomes.get(cacheKey)
  if (outcome === undefined) {
    outcome = {
      metricKey: labelKey({ listener: l.listener, route, status: String(status) }),
      level: requestLogLevel(route, status, code),
    }
    l.outcomes.set(cacheKey, outcome)
  }
  return outcome
}

export async function serveMetrics(req: IncomingMessage, res: ServerResponse, g: GatewayContext): Promise<void> {
  const path = (req.url ?? '/').split('?')[0]
  if (req.method === 'GET' && path === '/healthz') {
    if (g.database.available) sendJson(res, 200, { status: 'ok', database: 'up' }, g.clock.now())
    else
      sendJson(res, 503, { status: 'unavailable', database: 'down' }, g.clock.now(), {
        'retry-after': String(STATE_RETRY_AFTER_SECONDS),
      })
    return
  }
  if (req.method !== 'GET' || path !== '/metrics') {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n')
    return
  }
  const now = g.clock.now()
  const gauges = [
    {
      name: 'fleetkit_gateway_heartbeats_pending',
      help: 'Heartbeats waiting for the next batch write.',
      samples: [{ value: g.coalescer.size }],
    },
    {
      name: 'fleetkit_gateway_enroll_rate_sources',
      help: 'Source addresses tracked by the enrollment rate limiter.',
      samples: [{ value: g.enrollLimiter.trackedSources }],
    },
    {
      name: 'fleetkit_gateway_load_level',
      help: 'Load-shedding level: 0 none, 1 enrollment shed, 2 also leases and job reports, 3 everything.',
      samples: [{ value: g.shedder.level }],
    },
    {
      // The outage itself, not its side effects: while the database is down requests are answered 503 at once,
      // so nothing is queued and no batch write fails (FleetkitDatabaseUnavailable reads both).
      name: 'fleetkit_gateway_database_up',
      help: "Whether this gateway's requests may use its state database (1), or are answered 503 STATE_UNAVAILABLE (0), as /healthz says.",
      samples: [{ value: g.database.available ? 1 : 0 }],
    },
    {
      name: 'fleetkit_gateway_requests_in_flight',
      help: 'Requests in progress, by listener.',
      samples: [
        { labels: { listener: 'enroll' }, value: g.shedder.inFlightOf('enroll') },
        { labels: { listener: 'agent' }, value: g.shedder.inFlightOf('agent') },
      ],
    },
  ]
  // Read only while the database answers: a scrape must not wait out a statement's timeout (15 s) per read.
  // The registry's gauges read through a view that fails at once then (readsWhileUp), keeping their last values.
  if (g.database.available) await pushCertificateGauges(g, now, gauges)
  let text = g.metrics.render(gauges)
  try {
    text += await g.lifecycleMetrics.render()
  } catch (error) {
    g.logger('warn', 'metrics_query_failed', { query: 'lifecycle registry', error: errorText(error) })
  }
  res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

async function pushCertificateGauges(g: GatewayContext, now: Date, gauges: GaugeReading[]): Promise<void> {
  try {
    const renewWindowMs = Math.floor((g.agentCertLifetimeSeconds * 1000) / 3)
    const hour = await countCertificatesExpiringBefore(g.pool, now, new Date(now.getTime() + 3600_000))
    const window = await countCertificatesExpiringBefore(g.pool, now, new Date(now.getTime() + renewWindowMs))
    gauges.push({
      name: 'fleetkit_gateway_certificates_expiring_soon',
      help: 'Unrevoked agent certificates of connected nodes expiring within the window (renewal_window = the last third of the lifetime).',
      samples: [
        { labels: { within: '1h' }, value: hour } as never,
        { labels: { within: 'renewal_window' }, value: window } as never,
      ],
    })
  } catch (error) {
    g.logger('warn', 'metrics_query_failed', { query: 'certificate expiry', error: errorText(error) })
  }
}

/** Routine agent traffic (every host, every few seconds) logs at debug so info stays readable. */
const ROUTINE_ROUTES = new Set(['/v1/agent/heartbeat', '/v1/agent/lease', '/v1/agent/jobs/:id/heartbeat'])

export function requestLogLevel(route: string, status: number, code?: string): LogLevel {
  // Shed requests come in floods; the shedder logs each change of load level once (load_level_changed).
  if (code === 'GATEWAY_OVERLOADED') return 'debug'
  // 503 is the database (STATE_UNAVAILABLE), logged once as database_unavailable; each request is a warning.
  if (status === 503) return 'warn'
  if (status >= 500) return 'error'
  return ROUTINE_ROUTES.has(route) && status < 400 ? 'debug' : 'info'
}
