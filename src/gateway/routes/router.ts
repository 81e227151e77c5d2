// A small router: method and path pattern (`/v1/agent/jobs/:id/complete`) to a handler,
// with the route's name (its pattern) used in logs and metrics instead of the raw path.
import type { IncomingMessage } from 'node:http'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { AgentIdentity } from '../auth/agent-auth.js'
import type { ShedPriority } from '../load/load-shedder.js'

export interface RequestContext {
  req: IncomingMessage
  params: Record<string, string>
  now: Date
  /** The peer's address (the rate-limit key on the enrollment listener). */
  remote: string
  /** Set on authenticated agent routes. */
  identity?: AgentIdentity
  /** What the handler learned that the request log should name (the node of an enrollment). */
  note: { nodeId?: string }
  /** The parsed JSON object; each route reads it with its contract's reader. */
  body(): Promise<Record<string, unknown>>
}

export interface Route {
  method: 'GET' | 'HEAD' | 'POST'
  pattern: string
  /**
   * What each `:name` of the pattern must match (a regular expression without anchors or capturing
   * groups); `[^/]{1,128}` when not given. A path whose parameter does not match is not this route's.
   */
  params?: Readonly<Record<string, RegExp>>
  /** Agent listener: authenticate the client certificate; `mark` also records its first use. */
  auth: 'none' | 'check' | 'mark'
  /** When the gateway sheds load, which requests go first (default `normal`; load-shedder.ts). */
  shedding?: ShedPriority
  /** false: served while the database is down (the status page's own files; the default needs it). */
  needsDatabase?: boolean
  /** Returns the route's response type of the wire contract (src/protocol/). */
  handler(ctx: RequestContext): Promise<object>
}

interface Compiled {
  route: Route
  regex: RegExp
  names: string[]
}

export class Router {
  private readonly compiled: Compiled[]
  /**
   * Routes without parameters by method, then path: a heartbeat is found by two lookups, not a regex per
   * route (and without a `METHOD path` string made and hashed per request).
   */
  private readonly exact = new Map<string, Map<string, { route: Route; params: Record<string, string> }>>()

  constructor(routes: readonly Route[]) {
    this.compiled = routes.map((route) => {
      const names: string[] = []
      const source = route.pattern
        .split('/')
        .map((part) => {
          if (!part.startsWith(':')) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
          const name = part.slice(1)
          names.push(name)
          return `(${route.params?.[name]?.source ?? '[^/]{1,128}'})`
        })
        .join('/')
      return { route, regex: new RegExp(`^${source}$`), names }
    })
    this.compiled.forEach(({ route, names }, i) => {
      // First match wins: a path an earlier route also matches stays with the scan below.
      const shadowed = this.compiled
        .slice(0, i)
        .some((c) => c.route.method === route.method && c.regex.test(route.pattern))
      if (names.length > 0 || shadowed) return
      let paths = this.exact.get(route.method)
      if (!paths) this.exact.set(route.method, (paths = new Map()))
      if (!paths.has(route.pattern))
        paths.set(route.pattern, { route, params: Object.freeze({}) as Record<string, string> })
    })
  }

  match(method: string | undefined, path: string): { route: Route; params: Record<string, string> } | undefined {
    const exact = method === undefined ? undefined : this.exact.get(method)?.get(path)
    if (exact) return exact
    for (const { route, regex, names } of this.compiled) {
      if (route.method !== method) continue
      const m = regex.exec(path)
      if (!m) continue
      const params: Record<string, string> = {}
      names.forEach((name, i) => {
        params[name] = decodeParameter(m[i + 1]!)
      })
      return { route, params }
    }
    return undefined
  }

  /** The methods some route of this path takes (for a 405's Allow header); empty when no route has the path. */
  methodsOf(path: string): string[] {
    return [...new Set(this.compiled.filter(({ regex }) => regex.test(path)).map(({ route }) => route.method))]
  }

  /**
   * The route for a request, or the refusal a malformed one gets before authentication:
   * 404 for an unknown path, 405 (with the methods it takes) for a known path, 400 for bad escapes.
   */
  resolve(
    method: string | undefined,
    path: string,
    listener: string,
  ): { route: Route; params: Record<string, string> } {
    const match = this.match(method, path)
    if (match) return match
    const allowed = this.methodsOf(path)
    if (allowed.length > 0) {
      throw new FleetkitError(
        'METHOD_NOT_ALLOWED',
        `${String(method).slice(0, 16)} is not a method of ${path.slice(0, 200)}; it takes ${allowed.join(', ')}`,
        {
          data: { headers: { allow: allowed.join(', ') } },
        },
      )
    }
    throw new FleetkitError(
      'ROUTE_NOT_FOUND',
      `${String(method).slice(0, 16)} ${path.slice(0, 200)} is not a route of the ${listener} listener`,
    )
  }
}

/**
 * A path parameter with its percent-escapes undone; a malformed escape (an unpaired surrogate among them) or
 * a NUL (`%00`, which no column stores) is the client's error (400), never a 500.
 */
function decodeParameter(raw: string): string {
  let decoded: string
  try {
    decoded = decodeURIComponent(raw)
  } catch {
    throw new FleetkitError('REQUEST_INVALID', 'a path parameter has a malformed percent-escape')
  }
  if (decoded.includes('\0')) throw new FleetkitError('REQUEST_INVALID', 'a path parameter holds a NUL character')
  return decoded
}
