// A small router: method and path pattern (`/v1/agent/jobs/:id/complete`) to a handler,
// with the route's name (its pattern) used in logs and metrics instead of the raw path.
import type { IncomingMessage } from 'node:http'

import type { AgentIdentity } from './agent-auth.js'

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
  method: 'GET' | 'POST'
  pattern: string
  /** Agent listener: authenticate the client certificate; `mark` also records its first use. */
  auth: 'none' | 'check' | 'mark'
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

  constructor(routes: readonly Route[]) {
    this.compiled = routes.map((route) => {
      const names: string[] = []
      const source = route.pattern.split('/').map((part) => {
        if (!part.startsWith(':')) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        names.push(part.slice(1))
        return '([^/]{1,128})'
      }).join('/')
      return { route, regex: new RegExp(`^${source}$`), names }
    })
  }

  match(method: string | undefined, path: string): { route: Route; params: Record<string, string> } | undefined {
    for (const { route, regex, names } of this.compiled) {
      if (route.method !== method) continue
      const m = regex.exec(path)
      if (!m) continue
      const params: Record<string, string> = {}
      names.forEach((name, i) => { params[name] = decodeURIComponent(m[i + 1]!) })
      return { route, params }
    }
    return undefined
  }
}
