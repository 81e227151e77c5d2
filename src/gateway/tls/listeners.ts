// The gateway's listeners: the TLS options of a PKI set (server-auth, and mTLS against the CA
// bundle), listening with a coded error for an address that is taken, and a bounded close.
import type { Server } from 'node:http'
import type { Server as HttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { PkiSet } from '../../pki/pki-set.js'
import type { BindAddress } from '../config.js'
import { formatBind } from '../config.js'

export function tlsOf(set: PkiSet): { key: string; cert: string } {
  return { key: set.server.privateKeyPem, cert: set.server.certificatePem }
}

export function clientAuthOf(set: PkiSet): { ca: string; requestCert: true; rejectUnauthorized: true } {
  return { ca: set.bundlePem, requestCert: true, rejectUnauthorized: true }
}

export function listen(
  server: Server | HttpsServer,
  bind: BindAddress,
  variable: string,
  backlog = 511,
): Promise<BindAddress> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(
        new FleetkitError(
          'GATEWAY_BIND_FAILED',
          `cannot listen on ${formatBind(bind)} (${variable}): ${error.code ?? error.message}`,
          {
            actions: [`ss -ltnp 'sport = :${bind.port}'`, `set ${variable} to a free address of this host`],
            data: { variable, address: formatBind(bind), errno: error.code },
          },
        ),
      )
    }
    server.once('error', onError)
    server.listen({ port: bind.port, host: bind.host, backlog }, () => {
      server.off('error', onError)
      const address = server.address() as AddressInfo
      resolve({ host: address.address, port: address.port })
    })
  })
}

export async function closeServer(server: Server | HttpsServer): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve())
    server.closeIdleConnections()
    // Requests still running after 5 s are cut off: shutdown must finish.
    setTimeout(() => server.closeAllConnections(), 5000).unref()
  })
}
