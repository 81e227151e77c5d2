// Names clock skew instead of reporting a bare TLS error: thresholds for the checks,
// and an untrusted probe of the gateway's time used only to explain a failed handshake.
import { request as httpsRequest } from 'node:https'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { GatewayTransportError, skewFrom } from './gateway-client.js'

/** Certificates are backdated 60 s; beyond that a fresh certificate is "not yet valid" somewhere. */
export const SKEW_FAIL_MS = 60_000
const SKEW_WARN_MS = 10_000

/** TLS failures that a wrong clock on either side can cause (our check of the server, or its alert about our certificate). */
export function timeRelatedTlsFailure(code: string): boolean {
  return /^(CERT_NOT_YET_VALID|CERT_HAS_EXPIRED|ECONNRESET|EPROTO)$|^ERR_SSL_.*(ALERT|CERTIFICATE)/.test(code)
}

export function skewStatus(skewMs: number | undefined): 'pass' | 'warn' | 'fail' {
  if (skewMs === undefined) return 'warn'
  const size = Math.abs(skewMs)
  if (size >= SKEW_FAIL_MS) return 'fail'
  return size >= SKEW_WARN_MS ? 'warn' : 'pass'
}

/**
 * Reads the gateway's time from /healthz without verifying the server (the answer is
 * used only to word an error, never to trust anything). Returns the skew in ms or undefined.
 */
async function probeSkewMs(baseUrl: string, timeoutMs = 5000): Promise<number | undefined> {
  const started = Date.now()
  return new Promise((resolve) => {
    const req = httpsRequest(
      new URL('/healthz', baseUrl),
      { method: 'GET', rejectUnauthorized: false, timeout: timeoutMs, agent: false },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => {
          const finished = Date.now()
          let body: unknown
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
          } catch {
            body = undefined
          }
          const fromBody = skewFrom(body, started, finished)
          const date = typeof res.headers.date === 'string' ? Date.parse(res.headers.date) : Number.NaN
          resolve(fromBody ?? (Number.isNaN(date) ? undefined : Math.round(date - (started + finished) / 2)))
        })
        res.on('error', () => resolve(undefined))
      },
    )
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(undefined))
    req.end()
  })
}

function clockSkewError(skewMs: number, against: string): FleetkitError {
  const direction = skewMs > 0 ? 'behind' : 'ahead of'
  return new FleetkitError(
    'CLOCK_SKEW',
    `this host's clock is ${Math.round(Math.abs(skewMs) / 1000)} s ${direction} the gateway's (${against}); TLS certificates look expired or not yet valid`,
    {
      actions: ['timedatectl status', 'enable time synchronisation (systemd-timesyncd or chrony) on this host'],
      data: { skew_ms: skewMs },
    },
  )
}

/**
 * Turns a transport failure into the error an operator can act on: CLOCK_SKEW when the
 * handshake failed and the gateway's clock is far from ours, else GATEWAY_UNREACHABLE.
 * `probeUrls` are listeners whose /healthz answers without a client certificate.
 */
export async function explainTransportError(
  error: unknown,
  target: string,
  probeUrls: readonly string[],
  knownSkewMs?: number,
): Promise<FleetkitError> {
  if (error instanceof FleetkitError) return error
  const code =
    error instanceof GatewayTransportError ? error.code : ((error as NodeJS.ErrnoException).code ?? 'UNKNOWN')
  if (timeRelatedTlsFailure(code)) {
    let skew = knownSkewMs
    for (const url of probeUrls) {
      if (skew !== undefined && Math.abs(skew) >= SKEW_FAIL_MS) break
      skew = (await probeSkewMs(url)) ?? skew
    }
    if (skew !== undefined && Math.abs(skew) >= SKEW_FAIL_MS) return clockSkewError(skew, target)
  }
  return new FleetkitError(
    'GATEWAY_UNREACHABLE',
    `cannot reach the gateway at ${target}: ${code} ${(error as Error).message}`.trim(),
    {
      actions: ['fleetkit-agent doctor', `curl --cacert GATEWAY_CA ${target}/healthz`],
      data: { target, transport_code: code },
    },
  )
}
