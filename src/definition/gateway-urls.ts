// The gateways an agent may use: the definition's gateway first, then its replicas, each URL once.
// The seed and the agent role write them comma-separated (FLEETKIT_GATEWAY_URL, FLEETKIT_ENROLL_URL).
import type { Definition } from './types.js'

export interface GatewayUrlLists {
  /** Agent (mTLS) listeners. */
  agent: string[]
  /** Enrollment listeners. */
  enroll: string[]
}

export function gatewayUrlLists(gateway: Definition['gateway']): GatewayUrlLists {
  const replicas = gateway.replicas ?? []
  return {
    agent: [...new Set([gateway.url, ...replicas.map((r) => r.url)])],
    enroll: [...new Set([gateway.enrollUrl, ...replicas.map((r) => r.enrollUrl)])],
  }
}

/**
 * Whether release.url names an enrollment listener (gateway.enrollUrl or a replica's): the same scheme,
 * host and port. Such a listener presents the gateway's server certificate, so hosts fetch releases from
 * it with the gateway CA bundle they already pin, and no release.caFile is needed.
 */
export function releaseUrlOnGateway(definition: Pick<Definition, 'gateway' | 'release'>): boolean {
  const origin = originOf(definition.release.url)
  return origin !== undefined && gatewayUrlLists(definition.gateway).enroll.some((url) => originOf(url) === origin)
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin
  } catch {
    return undefined
  }
}
