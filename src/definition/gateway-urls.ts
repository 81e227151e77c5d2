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
