// Where the API token may be sent: over https anywhere, over plain http only to this machine (the
// local stub). A definition's `providers.hetzner.endpoint`, HETZNER_API_URL or --api-url naming
// http:// on another host would put the bearer token on the wire in clear.
import { isIP } from 'node:net'

import { FleetkitError } from '../checks/fleetkit-error.js'

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  if (host === 'localhost') return true
  if (isIP(host) === 4) return host.startsWith('127.')
  return host === '::1'
}

/** PROVIDER_ENDPOINT_INSECURE (naming only the scheme and host) for http to another machine. */
export function assertTokenSafeEndpoint(url: URL): void {
  if (url.protocol === 'https:' || isLoopbackHost(url.hostname)) return
  throw new FleetkitError(
    'PROVIDER_ENDPOINT_INSECURE',
    `the Hetzner API URL ${url.protocol}//${url.host} would carry the API token in clear: use https, or http only on this machine (127.0.0.1, ::1, localhost); nothing was sent`,
    {
      // The fixes, whichever of the three set it (--api-url and HETZNER_API_URL win over the definition);
      // `fleetkit runbook` is added by FleetkitError.
      actions: [
        `fleetkit provider check --api-url https://${url.host}${url.pathname}   (the API or your proxy over https)`,
        "unset HETZNER_API_URL   (if it set this URL; then the definition's endpoint or the public API is used)",
        'set providers.hetzner.endpoint in fleet.yaml to an https:// URL, or remove it (if it names this URL)',
      ],
      data: { scheme: url.protocol.replace(/:$/, ''), host: url.host },
    },
  )
}
