// The ratio bench's baseline request handler: it reads each request's body, as the gateway reads it
// (not discarded: the same stream work per request), and answers with the gateway's heartbeat answer
// (same fields, same size, same headers). The bare server (bare-server.ts) and the in-process
// heartbeat bench (heartbeat-path.ts) both use it.
import type { IncomingMessage, ServerResponse } from 'node:http'

/**
 * `parse`: also JSON.parse the body, as the gateway must to read the facts (BENCH_BARE_PARSE=1 in the ratio
 * bench): what that one call costs a heartbeat, measured in a server rather than in a loop.
 */
export function bareHandler(
  digest: string,
  options: { parse?: boolean } = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const { parse = false } = options
  return (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      // Taken to text like the gateway's body; an empty one is refused, so the read is not dead code.
      const text = Buffer.concat(chunks).toString('utf8')
      if (parse ? (JSON.parse(text) as { facts?: unknown }).facts === undefined : text === '') res.statusCode = 400
      const body = JSON.stringify({
        node_status: 'active',
        trust_bundle_sha256: digest,
        server_time: new Date().toISOString(),
      })
      res.writeHead(res.statusCode, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-store',
      })
      res.end(body)
    })
  }
}
