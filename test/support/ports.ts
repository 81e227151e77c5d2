// A free TCP port on 127.0.0.1 for tests that must name a port up front (a server
// started later, a DATABASE_URL that must point at nothing); listening on port 0 is preferred.
import { createServer } from 'node:net'

/** Asks the kernel for a port, then releases it: another process may take it before the caller. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })
}
