// The running agent's connection to the gateway: the current identity and mTLS client,
// swapped in place after a renewal while requests in flight finish on the old one.
import { FleetkitError } from '../checks/fleetkit-error.js'
import { explainTransportError } from './clock-skew.js'
import type { AgentConfig } from './config.js'
import { errorCodeOf } from '../protocol/agent-routes.js'
import { failoverReason, GatewayChoice } from './gateway-choice.js'
import { type GatewayResponse, GatewayClient } from './gateway-client.js'
import type { Identity } from './identity.js'

/** How long a replaced client keeps its sockets for requests already in flight. */
const RETIRED_CLIENT_GRACE_MS = 30_000

/** `now` is the agent's clock: the skew to the gateway's server_time is measured against it. */
function agentClient(
  config: AgentConfig,
  identity: Pick<Identity, 'caPem' | 'certificatePem' | 'keyPem'>,
  now: () => number,
  url: string,
): GatewayClient {
  return new GatewayClient(
    url,
    { ca: identity.caPem, cert: identity.certificatePem, key: identity.keyPem },
    { timeoutMs: config.requestTimeoutSeconds * 1000, now },
  )
}

/** What the last call's failure did: moved to another gateway, and whether that one is untried in this streak. */
export type Failover = NonNullable<ReturnType<GatewayChoice['failed']>>

export class AgentSession {
  identity: Identity
  client: GatewayClient
  readonly config: AgentConfig
  private retired: GatewayClient[] = []
  /** Which of the gateways (FLEETKIT_GATEWAY_URL's list) this session talks to. */
  readonly gateways: GatewayChoice
  /** Set by a call that failed over (a transport failure, a 502 to 504), cleared by one that did not. */
  lastFailover: Failover | undefined

  /** The agent's clock in milliseconds: every client of this session measures skew against it. */
  readonly now: () => number

  constructor(
    config: AgentConfig,
    identity: Identity,
    now: () => number = Date.now,
    private readonly onFailover: (failover: Failover, reason: string) => void = () => undefined,
  ) {
    this.config = config
    this.identity = identity
    this.now = now
    this.gateways = new GatewayChoice(gatewayUrlsOf(config), config.nodeId)
    this.client = agentClient(config, identity, now, this.gateways.current)
  }

  /** A client for another identity (a renewed or restaged one) on the same clock and gateway. */
  clientFor(identity: Pick<Identity, 'caPem' | 'certificatePem' | 'keyPem'>): GatewayClient {
    return agentClient(this.config, identity, this.now, this.gateways.current)
  }

  /** The current gateway failed: the next one's client takes over (requests in flight finish on the old). */
  private failOver(reason: string): void {
    this.lastFailover = this.gateways.failed()
    if (!this.lastFailover) return
    this.swap(this.identity, this.clientFor(this.identity))
    this.onFailover(this.lastFailover, reason)
  }

  /** A skew measured elsewhere (a recovery's challenge) or by a replaced client: stands until the client measures one. */
  private knownSkewMs: number | undefined

  get skewMs(): number | undefined {
    return this.client.lastSkewMs ?? this.knownSkewMs
  }

  /** The gateway's clock as measured outside this session's client (the recovery listener). */
  noteSkew(skewMs: number): void {
    this.knownSkewMs = skewMs
    this.client.lastSkewMs = skewMs
  }

  /** One request on the current client; transport failures become GATEWAY_UNREACHABLE or CLOCK_SKEW, 401 AGENT_CERTIFICATE_REJECTED. */
  async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<GatewayResponse> {
    const client = this.client
    let response: GatewayResponse
    try {
      response = await client.request(method, path, body)
    } catch (error) {
      const explained = await explainTransportError(
        error,
        client.baseUrl,
        probeUrls(this.config, client.baseUrl),
        client.lastSkewMs,
      )
      // Another gateway cannot cure the agent's clock (CLOCK_SKEW); an unreachable one (or a failed handshake) it may.
      const reason = failoverReason({ failure: explained.code })
      if (reason && client === this.client) this.failOver(reason)
      else this.lastFailover = undefined
      throw explained
    }
    const reason = failoverReason({ status: response.status })
    if (reason && client === this.client) {
      this.failOver(reason)
    } else {
      this.lastFailover = undefined
      if (response.status < 500) this.gateways.succeeded()
    }
    if (response.status === 401) {
      throw new FleetkitError(
        'AGENT_CERTIFICATE_REJECTED',
        `the gateway refused certificate serial ${this.identity.serial} (${errorCodeOf(response.body) ?? 'unauthorized'})`,
        {
          actions: [
            'fleetkit-agent doctor',
            "if its certificate was revoked by a completed CA rotation it missed, or the node was re-enrolled elsewhere (a retired node never comes back): fleetkit node token NODE --reissue on the operator's machine, the secret in the agent's secret file, agent.key and agent.pem moved out of its PKI directory, then fleetkit-agent enroll",
            "after a CA rotation, install the control host's current ca-bundle.pem as the agent's CA file first (FLEETKIT_GATEWAY_CA_FILE, /etc/fleetkit/gateway-ca.pem by default) and move gateway-ca.pem out of its PKI directory too",
            'if the node was decommissioned: systemctl disable --now fleetkit-agent',
          ],
          data: { serial: this.identity.serial, path },
        },
      )
    }
    return response
  }

  swap(identity: Identity, client: GatewayClient): void {
    const old = this.client
    // A new client knows no skew until its first answer: the old one's still holds meanwhile.
    this.knownSkewMs = old.lastSkewMs ?? this.knownSkewMs
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

/**
 * Listeners whose /healthz answers without a client certificate, for reading the gateway's time: the
 * gateway that just failed first (with several gateways, not necessarily the first of the list).
 */
export function probeUrls(config: AgentConfig, current?: string): string[] {
  return [...new Set([current ?? '', config.enrollUrl, config.gatewayUrl])].filter((url) => url !== '')
}

/** FLEETKIT_GATEWAY_URL's list (a config built by hand may hold only gatewayUrl). */
function gatewayUrlsOf(config: AgentConfig): string[] {
  return config.gatewayUrls.length > 0 ? config.gatewayUrls : [config.gatewayUrl]
}
