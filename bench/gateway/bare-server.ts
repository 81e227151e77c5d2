// The baseline of the ratio bench: a bare node:https mTLS server with the gateway's own server
// certificate and client CA bundle, answering every request with a small JSON body. Run as a child.
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'

const pkiDir = process.env.BENCH_PKI_DIR!
const [key, cert, ca] = await Promise.all(['server.key', 'server.pem', 'ca-bundle.pem'].map((f) => readFile(`${pkiDir}/${f}`, 'utf8')))
const server = createServer({ key, cert, ca, requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2' }, (req, res) => {
  req.resume()
  req.on('end', () => {
    const body = JSON.stringify({ node_status: 'active', server_time: new Date().toISOString() })
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
    res.end(body)
  })
})
server.keepAliveTimeout = 75_000
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
  process.stdout.write(`${JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port })}\n`)
})
process.stdin.on('end', () => process.exit(0))
process.stdin.resume()
