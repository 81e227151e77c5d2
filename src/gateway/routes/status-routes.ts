// The status page on the operator paths: GET /v1/operator/status (the page), its script and style
// (own routes: the Content-Security-Policy allows scripts and styles from the gateway only) and
// GET /v1/operator/status.json (the data it polls). Read-only; the same access as the operator API.
import type { IncomingMessage } from 'node:http'
import { readFileSync } from 'node:fs'

import { packagePath } from '../../package-root.js'
import type { GatewayContext } from './gateway-context.js'
import { RawReply } from './http.js'
import type { Route } from './router.js'
import { RequestRateWindow, statusDocument } from './status-view.js'

const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
}

const ASSETS = {
  page: { file: 'index.html', type: 'text/html; charset=utf-8' },
  script: { file: 'status.js', type: 'text/javascript; charset=utf-8' },
  style: { file: 'status.css', type: 'text/css; charset=utf-8' },
} as const

/** The page's files, read once from the package's web/status (they ship with it). */
function asset(cache: Map<string, string>, name: keyof typeof ASSETS): RawReply {
  const { file, type } = ASSETS[name]
  let body = cache.get(file)
  if (body === undefined) {
    body = readFileSync(packagePath('web', 'status', file), 'utf8')
    cache.set(file, body)
  }
  return new RawReply(type, body, PAGE_HEADERS)
}

export function statusRoutes(g: GatewayContext, authorize: (req: IncomingMessage) => Promise<string>): Route[] {
  const files = new Map<string, string>()
  const window = new RequestRateWindow(g.metrics, g.clock.now().getTime())
  const page =
    (name: keyof typeof ASSETS): Route['handler'] =>
    async (ctx) => {
      await authorize(ctx.req)
      return asset(files, name)
    }
  return [
    { method: 'GET', pattern: '/v1/operator/status', auth: 'none', needsDatabase: false, handler: page('page') },
    { method: 'GET', pattern: '/v1/operator/status.js', auth: 'none', needsDatabase: false, handler: page('script') },
    { method: 'GET', pattern: '/v1/operator/status.css', auth: 'none', needsDatabase: false, handler: page('style') },
    {
      method: 'GET',
      pattern: '/v1/operator/status.json',
      auth: 'none',
      handler: async (ctx) => {
        await authorize(ctx.req)
        return statusDocument(g.pool, window, ctx.now, g.readiness)
      },
    },
  ]
}
