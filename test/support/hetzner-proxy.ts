// A loopback proxy in front of the Hetzner stub that replaces chosen answers with ones the stub never
// sends (a field missing or of another type, a body past the client's size limit), the rest passed through.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface AnswerRewrite {
  method: string
  /** The path after the API root (`/servers`, `/servers/12`), or a pattern of it. */
  path: string | RegExp
  /** The answer's new JSON body, made from the stub's (status and RateLimit headers kept). */
  body?: (body: Record<string, unknown>) => unknown
  /** Sent to the stub first (default), so the request takes effect; false answers without it. */
  forward?: boolean
  /** Instead of a JSON body: this many bytes of JSON whitespace (Infinity: until the client goes away). */
  streamBytes?: number
  /** With streamBytes: say the size up front in Content-Length. */
  declareLength?: boolean
  times?: number
}

export interface HetznerProxy {
  /** The API root to give a client (`http://127.0.0.1:PORT/v1`). */
  url: string
  rewrite(rule: AnswerRewrite): void
  /** Streamed answers the client stopped reading before their end. */
  readonly abandoned: number
  close(): Promise<void>
}

const HOP_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'content-encoding'])

export async function startHetznerProxy(stubUrl: string): Promise<HetznerProxy> {
  const root = new URL(stubUrl)
  const rules: (AnswerRewrite & { left: number })[] = []
  let abandoned = 0

  function take(method: string, path: string): AnswerRewrite | undefined {
    const i = rules.findIndex(
      (r) => r.method === method && (typeof r.path === 'string' ? r.path === path : r.path.test(path)),
    )
    if (i < 0) return undefined
    const rule = rules[i]!
    if (--rule.left <= 0) rules.splice(i, 1)
    return rule
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const url = new URL(req.url ?? '/', root)
    const path = url.pathname.slice(root.pathname.replace(/\/$/, '').length)
    const rule = take(req.method ?? 'GET', path)
    let status = 200
    let headers: [string, string][] = [['content-type', 'application/json']]
    let text = '{}'
    if (rule?.forward !== false) {
      const answer = await fetch(`${root.origin}${url.pathname}${url.search}`, {
        method: req.method ?? 'GET',
        headers: Object.fromEntries(
          ['authorization', 'content-type'].flatMap((h) => (req.headers[h] ? [[h, String(req.headers[h])]] : [])),
        ),
        ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
      })
      status = answer.status
      headers = [...answer.headers.entries()].filter(([name]) => !HOP_HEADERS.has(name))
      text = await answer.text()
    }
    if (rule?.streamBytes !== undefined) return stream(res, status, rule.streamBytes, rule.declareLength === true)
    if (rule?.body) text = JSON.stringify(rule.body(JSON.parse(text === '' ? '{}' : text) as Record<string, unknown>))
    res.writeHead(status, Object.fromEntries(headers))
    res.end(text)
  }

  async function stream(res: ServerResponse, status: number, bytes: number, declareLength: boolean): Promise<void> {
    res.writeHead(status, {
      'content-type': 'application/json',
      ...(declareLength ? { 'content-length': String(bytes) } : {}),
    })
    const chunk = Buffer.alloc(64 * 1024, 0x20)
    let sent = 0
    let wake = () => {}
    res.once('close', () => wake())
    while (sent < bytes && !res.destroyed) {
      const part = bytes - sent < chunk.length ? chunk.subarray(0, bytes - sent) : chunk
      if (!res.write(part))
        await new Promise<void>((resolve) => {
          wake = resolve
          res.once('drain', resolve)
        })
      sent += part.length
    }
    if (res.destroyed) abandoned++
    else res.end()
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(502)
      res.end(String(error))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}${root.pathname.replace(/\/$/, '')}`,
    rewrite: (rule) => rules.push({ ...rule, left: rule.times ?? 1 }),
    get abandoned() {
      return abandoned
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
