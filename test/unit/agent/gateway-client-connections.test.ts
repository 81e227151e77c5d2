// The agent's gateway client's connections. It gives a new connection's TLS handshake three request
// timeouts (a fleet reconnecting at once queues its handshakes behind each other) and a request on an
// open connection one: a slow handshake is waited for, a dead one and a silent answer are still given
// up on. And it keeps its TLS session when a connection is reset, as a restarting gateway resets them.
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer as createHttpsServer } from 'node:https'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TLSSocket } from 'node:tls'

import { GatewayClient } from '../../../src/agent/gateway-client.js'
import { initPki } from '../../../src/pki/init-pki.js'
import { eventually } from '../../support/eventually.js'

describe('agent gateway client: handshake and request timeouts, TLS sessions', function () {
  this.timeout(30_000)
  let dir: string
  let tls: { key: string; cert: string; ca: string }
  const closers: (() => void)[] = []
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-client-timeouts-'))
    await initPki({ pkiDir: dir, serverNames: ['127.0.0.1'], now: new Date() })
    const [key, cert, ca] = await Promise.all(
      ['server.key', 'server.pem', 'ca-bundle.pem'].map((f) => readFile(join(dir, f), 'utf8')),
    )
    tls = { key: key!, cert: cert!, ca: ca! }
  })
  after(async () => {
    for (const close of closers) close()
    await rm(dir, { recursive: true, force: true })
  })

  /** A TLS server that starts each connection's handshake `handshakeDelayMs` after accepting it; GET /slow answers after 1.5 s. */
  async function server(handshakeDelayMs: number): Promise<string> {
    const https = createHttpsServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      setTimeout(() => res.end('{"ok":true}'), req.url === '/slow' ? 1500 : 0)
    })
    // Paused until handed over, so the client's first bytes wait in the kernel for the TLS server.
    const tcp = createServer({ pauseOnConnect: true }, (socket) =>
      setTimeout(() => https.emit('connection', socket), handshakeDelayMs),
    )
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve))
    closers.push(() => {
      tcp.close()
      https.close()
    })
    return `https://127.0.0.1:${(tcp.address() as AddressInfo).port}`
  }

  it('waits for a handshake slower than the request timeout (up to three of them)', async () => {
    const client = new GatewayClient(await server(700), { ca: tls.ca }, { timeoutMs: 400 })
    assert.equal((await client.request('GET', '/fast')).status, 200)
    client.close()
  })

  it('gives up on a handshake after three request timeouts, and says it never connected', async () => {
    const client = new GatewayClient(await server(5000), { ca: tls.ca }, { timeoutMs: 300 })
    await assert.rejects(client.request('GET', '/fast'), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'ETIMEDOUT')
      assert.match(error.message, /^no TLS connection to https:\/\/127\.0\.0\.1:\d+ within 900 ms$/)
      return true
    })
    client.close()
  })

  it('a request on an open connection, new or kept alive, gets one request timeout', async () => {
    const client = new GatewayClient(await server(0), { ca: tls.ca }, { timeoutMs: 400 })
    await assert.rejects(client.request('GET', '/slow'), /no answer from https:\/\/127\.0\.0\.1:\d+ within 400 ms/)
    assert.equal((await client.request('GET', '/fast')).status, 200)
    await assert.rejects(client.request('GET', '/slow'), /no answer from https:\/\/127\.0\.0\.1:\d+ within 400 ms/)
    client.close()
  })

  it('resumes its TLS session on the next connection after the gateway reset the last one', async () => {
    const resumed: boolean[] = []
    const https = createHttpsServer({ key: tls.key, cert: tls.cert }, (req, res) => res.end('{"ok":true}'))
    https.on('secureConnection', (socket: TLSSocket) => resumed.push(socket.isSessionReused()))
    // The TCP sockets under the TLS server's, kept to reset them.
    const sockets: Socket[] = []
    const tcp = createServer((socket) => {
      sockets.push(socket)
      https.emit('connection', socket)
    })
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve))
    closers.push(() => {
      tcp.close()
      https.close()
    })
    const client = new GatewayClient(
      `https://127.0.0.1:${(tcp.address() as AddressInfo).port}`,
      { ca: tls.ca },
      { timeoutMs: 5000 },
    )
    assert.equal((await client.request('GET', '/one')).status, 200)
    // Reset the kept-alive connection (RST, as from a killed process): the client sees ECONNRESET on it.
    const reset = new Promise((resolve) => sockets[0]!.once('close', resolve))
    sockets[0]!.resetAndDestroy()
    await reset
    // The client has seen the reset when its agent has dropped the kept-alive socket.
    const agent = (client as unknown as { agent: { freeSockets: Record<string, unknown[]> } }).agent
    await eventually(
      'the client to drop the reset connection',
      () => Object.values(agent.freeSockets).every((list) => list.length === 0),
      { timeoutMs: 5000, intervalMs: 10 },
    )
    assert.equal((await client.request('GET', '/two')).status, 200)
    assert.deepEqual(resumed, [false, true], "the second connection resumed the first one's session")
    client.close()
  })
})
