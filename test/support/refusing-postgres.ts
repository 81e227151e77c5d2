// A listener that speaks just enough of PostgreSQL's wire protocol to refuse every new session with one
// FATAL ErrorResponse of a chosen SQLSTATE, as a real server does when the new backend fails before any
// statement (53100: a full disk, it cannot write its relcache init file). For the CLI's connect path:
// a real server cannot be made to fail at connect on demand.
import { createServer, type Server, type Socket } from 'node:net'

export interface RefusingPostgres {
  url: string
  /** How many sessions were refused. */
  refused: () => number
  close(): Promise<void>
}

const SSL_REQUEST = 80877103
const GSSENC_REQUEST = 80877104

export async function startRefusingPostgres(sqlstate: string, message: string): Promise<RefusingPostgres> {
  let refused = 0
  const sockets = new Set<Socket>()
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => undefined)
    let buffered = Buffer.alloc(0)
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk])
      // Untyped startup-phase messages: int32 length (itself included), int32 code, body.
      while (buffered.length >= 8 && buffered.length >= buffered.readInt32BE(0)) {
        const length = buffered.readInt32BE(0)
        const code = buffered.readInt32BE(4)
        buffered = buffered.subarray(length)
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          socket.write('N')
          continue
        }
        refused++
        socket.end(errorResponse(sqlstate, message))
        return
      }
    })
  })
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (typeof address !== 'object' || address === null) throw new Error('no address')
  return {
    url: `postgres://fleet:refused-secret@127.0.0.1:${address.port}/fleet`,
    refused: () => refused,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** An ErrorResponse ('E'): severity, SQLSTATE and message fields, each a C string, then a terminating NUL. */
function errorResponse(sqlstate: string, message: string): Buffer {
  const fields = Buffer.concat([
    field('S', 'FATAL'),
    field('V', 'FATAL'),
    field('C', sqlstate),
    field('M', message),
    Buffer.from([0]),
  ])
  const header = Buffer.alloc(5)
  header.write('E', 0)
  header.writeInt32BE(4 + fields.length, 1)
  return Buffer.concat([header, fields])
}

function field(type: string, value: string): Buffer {
  return Buffer.concat([Buffer.from(type), Buffer.from(value, 'utf8'), Buffer.from([0])])
}
