// A release mirror on loopback for the demo: the signed release directory served read-only over
// HTTPS with a certificate of the mirror's own CA, which the demo's fleet.yaml names as release.caFile.
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { createServer, type Server } from 'node:https'
import type { Socket } from 'node:net'
import { resolve, sep } from 'node:path'

export interface ReleaseMirror {
  /** https://127.0.0.1:PORT */
  url: string
  close(): Promise<void>
}

export async function startReleaseMirror(options: {
  root: string
  keyPem: string
  certPem: string
}): Promise<ReleaseMirror> {
  const root = resolve(options.root)
  const sockets = new Set<Socket>()
  const server: Server = createServer({ key: options.keyPem, cert: options.certPem }, (req, res) => {
    const refuse = (status: number) => {
      res.writeHead(status, { 'content-type': 'text/plain' })
      res.end(`${status}\n`)
    }
    let path: string
    try {
      path = decodeURIComponent(new URL(req.url ?? '/', 'https://mirror').pathname)
    } catch {
      return refuse(400)
    }
    const file = resolve(root, `.${path}`)
    if (req.method !== 'GET' || !file.startsWith(root + sep)) return refuse(req.method === 'GET' ? 404 : 405)
    stat(file).then(
      (info) => {
        if (!info.isFile()) return refuse(404)
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': info.size })
        createReadStream(file).pipe(res)
      },
      () => refuse(404),
    )
  })
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  await new Promise<void>((done, fail) => {
    server.once('error', fail)
    server.listen(0, '127.0.0.1', () => done())
  })
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return {
    url: `https://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => done())
      }),
  }
}
