// The baseline of the ratio bench: a bare node:https mTLS server with the gateway's own server
// certificate and client CA bundle, reading each request's body and answering with the gateway's
// heartbeat answer (same fields, same size), with the gateway's TLS ticket keys. Run as a child;
// BENCH_PORT: where to listen (a restarted one, in the storm bench), else any free port.
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'

import { loadOrCreateTicketKeys } from '../../src/gateway/tls/ticket-keys.js'
import { bareHandler } from './bare-handler.js'
import { runOtherStreams, streamKindsOf } from './other-streams.js'

const pkiDir = process.env.BENCH_PKI_DIR!
const [key, cert, ca] = await Promise.all(
  ['server.key', 'server.pem', 'ca-bundle.pem'].map((f) => readFile(`${pkiDir}/${f}`, 'utf8')),
)
// The gateway's answer has the same fields and headers (node_status, the trust bundle digest, server_time; no-store).
// The gateway's ticket keys (kept with the PKI): sessions resume across a restart of either server.
const ticketKeys = await loadOrCreateTicketKeys(pkiDir)
const digest = createHash('sha256').update(ca!).digest('hex')
// BENCH_BARE_OTHER_STREAMS=tcp,http,file,memory (the kinds other-streams.ts lists): put those kinds of stream
// through this process first, as a gateway has them: what a server that does more than answer its clients pays.
const otherStreams = process.env.BENCH_BARE_OTHER_STREAMS
if (otherStreams) await runOtherStreams(streamKindsOf(otherStreams))
// BENCH_BARE_PARSE=1: JSON.parse each body too (bare-handler.ts), the one piece of the gateway's reading it lacks.
const server = createServer(
  { key, cert, ca, ticketKeys, requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2' },
  bareHandler(digest, { parse: process.env.BENCH_BARE_PARSE === '1' }),
)
server.keepAliveTimeout = 75_000
server.listen({ port: Number(process.env.BENCH_PORT ?? 0), host: '127.0.0.1', backlog: 4096 }, () => {
  process.stdout.write(`${JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port })}\n`)
})
process.stdin.on('end', () => process.exit(0))
// Exit normally on SIGTERM, so a --cpu-prof profile is written.
process.once('SIGTERM', () => process.exit(0))
process.stdin.resume()
