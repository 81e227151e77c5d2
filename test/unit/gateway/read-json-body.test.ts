// readJsonBody on a real HTTP server: a body already taken in whole by the parser (read at once, the
// heartbeat's case) and one still arriving (read by events) give the same answers, refusals included; and
// through the gateway's request handler, a body over the limit gets its 413 on the wire, chunked or not.
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'

import { systemClock } from '../../../src/config/clock.js'
import { DEFAULT_LOAD_SHEDDER_TUNING, LoadShedder } from '../../../src/gateway/load/load-shedder.js'
import { GatewayMetrics } from '../../../src/gateway/metrics/metrics.js'
import type { GatewayContext } from '../../../src/gateway/routes/gateway-context.js'
import { errorReply, readJsonBody } from '../../../src/gateway/routes/http.js'
import { requestHandler } from '../../../src/gateway/routes/request-handler.js'
import { Router } from '../../../src/gateway/routes/router.js'
import { silentLogger } from '../../../src/log/logger.js'
import { eventually } from '../../support/eventually.js'

/** Polls (no listener on the body, which would start reading it) until the request is complete. */
async function untilComplete(req: IncomingMessage): Promise<void> {
  while (!req.complete) await new Promise((resolve) => setImmediate(resolve))
}

interface Outcome {
  status: number
  body?: Record<string, unknown>
  code?: string
  complete: boolean
}

describe('gateway: reading a JSON request body', () => {
  let server: Server
  let port: number
  const outcomes: Outcome[] = []
  let reading = 0

  before(async () => {
    server = createServer((req: IncomingMessage, res) => {
      // `/wait`: the read waits until the parser has taken in the whole body (the buffered path); `/now` reads at once.
      const ready = req.url === '/wait' ? untilComplete(req) : Promise.resolve()
      void ready.then(async () => {
        const complete = req.complete
        reading++
        try {
          outcomes.push({ status: 200, body: await readJsonBody(req, 1024), complete })
        } catch (error) {
          const reply = errorReply(error)
          outcomes.push({ status: reply.status, code: reply.code, complete })
        }
        res.writeHead(200, { connection: 'close' }).end()
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  beforeEach(() => {
    outcomes.length = 0
    reading = 0
  })

  /**
   * Send a request in parts, wait for the answer, return what the server read. On `/now` the body is
   * sent only once the server has started reading it, so it arrives by events; each part is written
   * once the previous one has left this process.
   */
  async function send(path: string, head: string, parts: Buffer[]): Promise<Outcome> {
    const socket: Socket = connect(port, '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    const closed = new Promise((resolve) => socket.once('close', resolve))
    socket.on('data', () => undefined)
    socket.write(`POST ${path} HTTP/1.1\r\nhost: x\r\n${head}\r\n`)
    if (path === '/now') await eventually('the server to start reading the body', () => reading > 0, { intervalMs: 1 })
    for (const part of parts) {
      if (socket.destroyed) break
      await new Promise((resolve) => socket.write(part, resolve))
    }
    await closed
    assert.equal(outcomes.length, 1)
    return outcomes[0]!
  }
  const fixed = (text: string) => ({
    head: `content-length: ${Buffer.byteLength(text)}\r\n`,
    parts: [Buffer.from(text)],
  })
  const chunked = (...pieces: Buffer[]) => ({
    head: 'transfer-encoding: chunked\r\n',
    parts: [
      ...pieces.map((p) => Buffer.concat([Buffer.from(`${p.length.toString(16)}\r\n`), p, Buffer.from('\r\n')])),
      Buffer.from('0\r\n\r\n'),
    ],
  })

  it('refuses a body the client cut off mid-way (400, never a 500)', async () => {
    const socket: Socket = connect(port, '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.on('error', () => undefined)
    socket.write('POST /now HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{"facts":')
    await eventually('the server reading the body', () => reading > 0, { intervalMs: 10, timeoutMs: 5000 })
    socket.destroy()
    const outcome = await eventually('the read to end', () => outcomes[0], { intervalMs: 10, timeoutMs: 5000 })
    assert.deepEqual(outcome, { status: 400, code: 'REQUEST_INVALID', complete: false })
  })

  for (const path of ['/wait', '/now']) {
    const how = path === '/wait' ? 'taken in whole before the read' : 'still arriving when read'
    it(`parses a body ${how}, multi-byte characters split across chunks included`, async () => {
      const text = Buffer.from(JSON.stringify({ facts: { kernel: 'noyau \u00e9t\u00e9 \u{1F600}' } }))
      const split = text.indexOf(0xf0) + 2
      const { head, parts } = chunked(text.subarray(0, split), text.subarray(split))
      const outcome = await send(path, head, parts)
      assert.equal(outcome.complete, path === '/wait')
      assert.deepEqual(outcome.body, { facts: { kernel: 'noyau \u00e9t\u00e9 \u{1F600}' } })
    })

    it(`reads an empty body as {} and refuses invalid JSON, a non-object and too large a body (${how})`, async () => {
      assert.deepEqual((await send(path, 'content-length: 0\r\n', [])).body, {})
      outcomes.length = 0
      const invalid = fixed('{"facts":')
      assert.deepEqual(await send(path, invalid.head, invalid.parts), {
        status: 400,
        code: 'REQUEST_INVALID',
        complete: path === '/wait',
      })
      outcomes.length = 0
      const array = fixed('[1,2]')
      assert.equal((await send(path, array.head, array.parts)).status, 400)
      outcomes.length = 0
      // Chunked, so no content-length announces the size: the limit is found while reading.
      const big = chunked(Buffer.from(`{"x":"${'a'.repeat(700)}`), Buffer.from(`${'b'.repeat(700)}"}`))
      assert.equal((await send(path, big.head, big.parts)).status, 413)
    })
  }
})

describe('gateway: a request body over 64 KiB is answered 413 on the wire', function () {
  this.timeout(20_000)
  let server: Server
  let port: number
  let handled = 0

  before(async () => {
    const g = {
      clock: systemClock,
      logger: silentLogger,
      metrics: new GatewayMetrics(),
      shedder: new LoadShedder({ tuning: DEFAULT_LOAD_SHEDDER_TUNING, delayMs: () => 0 }),
      database: { available: true },
    } as unknown as GatewayContext
    // A route that reads its body as every POST route does.
    const router = new Router([
      {
        method: 'POST',
        pattern: '/v1/echo',
        auth: 'none',
        needsDatabase: false,
        handler: async (ctx) => {
          handled++
          return { keys: Object.keys(await ctx.body()).length }
        },
      },
    ])
    server = createServer(requestHandler('enroll', router, g))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  after(() => new Promise<void>((resolve) => server.close(() => resolve())))

  /** Writes the whole request at once, as curl does, and returns every byte the server sent before it closed. */
  async function post(head: string, body: Buffer): Promise<string> {
    const socket = connect(port, '127.0.0.1')
    let got = ''
    let failure = ''
    socket.on('data', (d: Buffer) => (got += d.toString('latin1')))
    socket.on('error', (e: NodeJS.ErrnoException) => (failure = e.code ?? e.message))
    const closed = new Promise((resolve) => socket.once('close', resolve))
    socket.write(`POST /v1/echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${head}\r\n`)
    socket.write(body)
    await closed
    return got === '' ? `(nothing: ${failure || 'closed'})` : got
  }
  const json = (size: number) => Buffer.from(`{"pad":"${'x'.repeat(size - 10)}"}`)
  const chunkedOf = (body: Buffer) =>
    Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')])

  function assert413(reply: string, what: string): void {
    assert.match(reply, /^HTTP\/1\.1 413 /, `${what}: ${reply.slice(0, 120)}`)
    assert.match(reply, /connection: close/i, what)
    const body = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string } }
    assert.equal(body.error.code, 'request_invalid')
    assert.match(body.error.message, /larger than 65536 bytes/)
  }

  it('chunked, with no length to refuse by: 70,000 bytes and 1 MiB get the 413, not a reset', async () => {
    for (const size of [70_000, 1024 * 1024 - 64]) {
      const body = json(size)
      assert413(await post('transfer-encoding: chunked\r\n', chunkedOf(body)), `chunked ${size}`)
    }
  })

  it('with a Content-Length over the limit: the 413 before the body is read', async () => {
    const body = json(70_000)
    assert413(await post(`content-length: ${body.length}\r\n`, body), 'content-length')
  })

  it('a chunked body within the limit is read and answered', async () => {
    const before = handled
    const reply = await post('transfer-encoding: chunked\r\nconnection: close\r\n', chunkedOf(json(60_000)))
    assert.match(reply, /^HTTP\/1\.1 200 /)
    assert.match(reply, /"keys":1/)
    assert.equal(handled, before + 1)
  })
})
