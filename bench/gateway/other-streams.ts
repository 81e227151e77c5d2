// The kinds of stream a gateway process runs besides its agents' connections, each put through a few
// hundred times: a TCP socket (PostgreSQL's connections), a plain HTTP server and client (the metrics
// listener), a file read stream (release files), in-memory streams, a worker thread's stdio (the issuance
// pool's) and node-postgres' pool, clients and queries over a throwaway server (`pg`). Node's stream and
// HTTP internals are shared by every stream in a process, so their inline caches see these shapes too;
// heartbeat-path.ts `--other-streams KIND` and the ratio bench's BENCH_BARE_OTHER_STREAMS run this first
// to measure what that costs a heartbeat (docs/performance.md).
import { createReadStream } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer as createHttpServer, request } from 'node:http'
import { type AddressInfo, connect, createServer as createNetServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough, Readable, Transform, Writable } from 'node:stream'
import { Worker } from 'node:worker_threads'

import { startBenchPostgres } from './postgres.js'

const STREAM_KINDS = ['tcp', 'http', 'file', 'memory', 'worker', 'pg'] as const
export type StreamKind = (typeof STREAM_KINDS)[number]

/** A comma-separated list of kinds (a flag's or a variable's value), refused whole if one is not a kind. */
export function streamKindsOf(list: string): StreamKind[] {
  const kinds = list.split(',')
  if (kinds.some((kind) => !(STREAM_KINDS as readonly string[]).includes(kind)))
    throw new Error(`other streams: a comma-separated list of ${STREAM_KINDS.join(', ')}, not ${list}`)
  return kinds as StreamKind[]
}

export async function runOtherStreams(kinds: readonly StreamKind[], rounds = 200): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fleetkit-bench-streams-'))
  const file = join(dir, 'release.bin')
  await writeFile(file, Buffer.alloc(4096, 1))
  const echo = createNetServer((socket) => socket.pipe(socket))
  const http = createHttpServer((req, res) => {
    req.on('data', () => undefined)
    req.on('end', () => res.end('ok'))
  })
  const port = async (server: typeof echo | typeof http) => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return (server.address() as AddressInfo).port
  }
  const tcp = connect(await port(echo), '127.0.0.1')
  const httpPort = await port(http)
  try {
    // A worker thread, as the issuance pool starts: its stdout and stderr are streams in this process, piped to
    // process.stdout. A few are enough: the shapes are the same each time.
    if (kinds.includes('worker'))
      for (let i = 0; i < 3; i++) {
        const worker = new Worker("require('node:worker_threads').parentPort.postMessage('up')", { eval: true })
        await new Promise((resolve) => worker.once('message', resolve))
        await worker.terminate()
      }
    // A PostgreSQL client as the gateway holds one: node-postgres' pool, clients and queries are emitters of
    // their own over a TCP socket (a throwaway server; queries and transactions as the coalescer and probe make).
    if (kinds.includes('pg')) {
      const db = await startBenchPostgres()
      try {
        for (let i = 0; i < rounds; i++) {
          await db.pool.query('SELECT $1::int AS n', [i])
          const client = await db.pool.connect()
          try {
            await client.query('BEGIN')
            await client.query('SELECT now()')
            await client.query('COMMIT')
          } finally {
            client.release()
          }
        }
      } finally {
        await db.stop()
      }
    }
    for (let i = 0; i < rounds; i++) {
      if (kinds.includes('tcp'))
        await new Promise<void>((resolve) => {
          tcp.once('data', () => resolve())
          tcp.write(Buffer.alloc(100, 0x51))
        })
      if (kinds.includes('http'))
        await new Promise<void>((resolve) => {
          const req = request({ port: httpPort, host: '127.0.0.1', method: 'POST', path: '/' }, (res) => {
            res.on('data', () => undefined)
            res.on('end', resolve)
          })
          req.end('{"query":1}')
        })
      if (kinds.includes('file'))
        await new Promise<void>((resolve) => {
          createReadStream(file)
            .on('data', () => undefined)
            .on('end', resolve)
        })
      if (kinds.includes('memory')) {
        const through = new PassThrough().on('data', () => undefined)
        through.end('abc')
        const transform = new Transform({ transform: (chunk, _encoding, done) => done(null, chunk) })
        transform.on('data', () => undefined).end('x')
        await new Promise((resolve) =>
          Readable.from(['a', 'b'])
            .pipe(new Writable({ write: (_chunk, _encoding, done) => done() }))
            .on('finish', resolve),
        )
      }
    }
  } finally {
    tcp.destroy()
    echo.close()
    http.close()
    await rm(dir, { recursive: true, force: true })
  }
}
