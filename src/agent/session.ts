// The running agent's connection to the gateway: the current identity and mTLS client,
// swapped in place after a renewal while requests in flight finish on the old one.
import { FleetkitError } from '../checks/fleetkit-error.js'
import { explainTransportError } from './clock-skew.js'
import type { AgentConfig } from './config.js'
import { errorCodeOf } from '../protocol/agent-routes.js'
import { type GatewayResponse, GatewayClient } from './gateway-client.js'
import type { Identity } from './identity.js'

/** How long a replaced client keeps its sockets for requests already in flight. */
const RETIRED_CLIENT_GRACE_MS = 30_000

/** `now` is the agent's clock: the skew to the gateway's server_time is measured against it. */
function agentClient(
  config: AgentConfig,
  identity: Pick<Identity, 'caPem' | 'certificatePem' | 'keyPem'>,
  now: () => number = Date.now,
): GatewayClient {
  return new GatewayClient(
    config.gatewayUrl,
    { ca: identity.caPem, cert: identity.certificatePem, key: identity.keyPem },
    { timeoutMs: config.requestTimeoutSeconds * 1000, now },
  )
}

export class AgentSession {
  identity: Identity
  client: GatewayClient
  readonly config: AgentConfig
  private retired: GatewayClient[] = []

  /** The agent's clock in milliseconds: every client of this session measures skew against it. */
  readonly now: () => number

  constructor(
    config: AgentConfig,
    identity: Identity,
    now: () => number = Date.now,
    client: GatewayClient = agentClient(config, identity, now),
  ) {
    this.config = config
    this.identity = identity
    this.now = now
    this.client = client
  }

  /** A client for another identity (a renewed or restaged one) on the same clock. */
  clientFor(identity: Pick<Identity, 'caPem' | 'certificatePem' | 'keyPem'>): GatewayClient {
    return agentClient(this.config, identity, this.now)
  }

  get skewMs(): number | undefined {
    return this.client.lastSkewMs
  }

  /** One request on the current client; transport failures become GATEWAY_UNREACHABLE or CLOCK_SKEW, 401 AGENT_CERTIFICATE_REJECTED. */
  async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<GatewayResponse> {
    const client = this.client
    let response: GatewayResponse
    try {
      response = await client.request(method, path, body)
    } catch (error) {
      throw await explainTransportError(error, this.config.gatewayUrl, probeUrls(this.config), client.lastSkewMs)
    }
    if (response.status === 401) {
      throw new FleetkitError(
        'AGENT_CERTIFICATE_REJECTED',
        `the gateway refused certificate serial ${this.identity.serial} (${errorCodeOf(response.body) ?? 'unauthorized'})`,
        {
          actions: [
            'fleetkit-agent doctor',
            'if the node was revoked or re-enrolled elsewhere, enroll again with a new secret (fleetkit node token NODE)',
          ],
          data: { serial: this.identity.serial, path },
        },
      )
    }
    return response
  }

  swap(identity: Identity, client: GatewayClient): void {
    const old = this.client
    this.identity = identity
    this.client = client
    this.retired.push(old)
    setTimeout(() => {
      old.close()
      this.retired = this.retired.filter((c) => c !== old)
    }, RETIRED_CLIENT_GRACE_MS).unref()
  }

  close(): void {
    this.client.close()
    for (const client of this.retired) client.close()
    this.retired = []
  }
}

/** Listeners whose /healthz answers without a client certificate, for reading the gateway's time. */
export function probeUrls(config: AgentConfig): string[] {
  return [config.enrollUrl, config.gatewayUrl].filter((url) => url !== '')
}
