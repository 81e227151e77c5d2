// Coming back after an absence longer than the certificate's lifetime: ask the enrollment
// listener for a challenge, sign it and the new key's CSR with the key of the expired certificate, stage the new identity.
import { sign } from 'node:crypto'

import { FleetkitError } from '../checks/fleetkit-error.js'
import type { Logger } from '../log/logger.js'
import { errorCodeOf } from '../protocol/agent-routes.js'
import { readResponse } from '../protocol/read.js'
import {
  RECOVER_CHALLENGE_PATH,
  RECOVER_PATH,
  type RecoverChallengeRequest,
  type RecoverRequest,
  readRecoverChallengeResponse,
  readRecoverResponse,
} from '../protocol/recovery.js'
import { recoverySignedBytes } from '../pki/recovery-signature.js'
import type { AgentConfig } from './config.js'
import { joinBundles, matchesKey } from './enroll.js'
import { isRetryLaterStatus } from './backoff.js'
import { explainTransportError } from './clock-skew.js'
import { GatewayClient, GatewayTransportError } from './gateway-client.js'
import { type Identity, certificateWindow, stageIdentity } from './identity.js'
import { generateKeyAndCsr } from './key-and-csr.js'
import { urlsFrom } from './gateway-choice.js'
import { probeUrls } from './session.js'

/**
 * One recovery attempt for `expired` (the staged identity). Returns the new identity, staged;
 * throws RECOVERY_WINDOW_EXPIRED or RECOVERY_REFUSED (the node needs a new secret), a transport error, or
 * CLOCK_SKEW with `skew_ms` when the certificate has not expired on the gateway's clock (`now` is the agent's).
 */
export async function recoverIdentity(
  config: AgentConfig,
  expired: Identity,
  log: Logger,
  now: () => number = Date.now,
): Promise<Identity> {
  if (config.enrollUrl === '') {
    throw new FleetkitError(
      'CERTIFICATE_EXPIRED',
      `certificate ${expired.serial} expired and FLEETKIT_ENROLL_URL is not set, so the agent cannot recover`,
      {
        actions: [
          'set FLEETKIT_ENROLL_URL in the agent configuration',
          'or issue a fresh secret (fleetkit node token NODE --reissue) and run fleetkit-agent enroll',
        ],
        data: { serial: expired.serial },
      },
    )
  }
  // A gateway and its replicas: an unreachable one hands the recovery (a fresh challenge) to the next.
  const urls = urlsFrom(config.enrollUrls.length > 0 ? config.enrollUrls : [config.enrollUrl], config.nodeId)
  for (let which = 0; ; which++) {
    try {
      return await recoverAt(urls[which]!, config, expired, log, now)
    } catch (error) {
      const unreachable = error instanceof FleetkitError && error.code === 'GATEWAY_UNREACHABLE'
      if (!unreachable || which + 1 >= urls.length) throw error
      log('warn', 'recovery_failover', { from: urls[which], to: urls[which + 1] })
    }
  }
}

async function recoverAt(
  url: string,
  config: AgentConfig,
  expired: Identity,
  log: Logger,
  now: () => number,
): Promise<Identity> {
  // The enrollment listener authenticates the server only: trust what the gateway last handed over.
  const client = new GatewayClient(
    url,
    { ca: expired.caPem },
    { timeoutMs: config.requestTimeoutSeconds * 1000, maxSockets: 1, now },
  )
  try {
    const challengeRequest: RecoverChallengeRequest = { node_id: config.nodeId }
    const asked = await client.request('POST', RECOVER_CHALLENGE_PATH, challengeRequest)
    if (asked.status !== 200) throw refusal(asked.status, asked.body, expired, asked.headers['retry-after'])
    const { challenge } = readResponse(readRecoverChallengeResponse, asked.body, RECOVER_CHALLENGE_PATH)
    // Expiry is the gateway's to judge: a certificate still valid on its clock is not recovered (the
    // gateway would refuse, not_expired) but kept; it is this host's clock that is wrong.
    const gatewayNow = Date.parse((asked.body as { server_time?: string }).server_time ?? '')
    if (asked.skewMs !== undefined && gatewayNow < expired.window.notAfter.getTime())
      throw notExpired(expired, asked.skewMs, url)
    const { keyPem, csrPem } = await generateKeyAndCsr(config.nodeId)
    // The signature covers the CSR too: it is good for this new key only.
    const signature = sign('sha256', recoverySignedBytes(challenge, csrPem, 2), {
      key: expired.keyPem,
      dsaEncoding: 'der',
    }).toString('base64')
    const request: RecoverRequest = {
      node_id: config.nodeId,
      challenge,
      certificate_pem: expired.certificatePem,
      signature,
      signature_version: 2,
      csr_pem: csrPem,
    }
    const answered = await client.request('POST', RECOVER_PATH, request)
    if (answered.status !== 200) throw refusal(answered.status, answered.body, expired, answered.headers['retry-after'])
    const recovered = readResponse(readRecoverResponse, answered.body, RECOVER_PATH)
    if (!matchesKey(recovered.certificate_pem, keyPem)) throw refusal(answered.status, answered.body, expired)
    const caPem = joinBundles(recovered.ca_pem)
    await stageIdentity(config.pkiDir, keyPem, recovered.certificate_pem, caPem)
    const window = certificateWindow(recovered.certificate_pem)
    log('info', 'identity_recovered', {
      serial: window.serial,
      expired_serial: expired.serial,
      not_after: window.notAfter.toISOString(),
    })
    return {
      keyPem,
      certificatePem: recovered.certificate_pem,
      caPem,
      window: { notBefore: window.notBefore, notAfter: window.notAfter },
      serial: window.serial,
      fingerprint256: window.fingerprint256,
    }
  } catch (error) {
    if (error instanceof GatewayTransportError) throw await explainTransportError(error, url, probeUrls(config))
    throw error
  } finally {
    client.close()
  }
}

function notExpired(expired: Identity, skewMs: number, url: string): FleetkitError {
  return new FleetkitError(
    'CLOCK_SKEW',
    `this host's clock is ${Math.round(-skewMs / 1000)} s ahead of the gateway's (${url}): certificate ${expired.serial} looks expired here but is valid until ${expired.window.notAfter.toISOString()} on the gateway's clock; the agent keeps using it`,
    {
      actions: ['timedatectl status', 'enable time synchronisation (systemd-timesyncd or chrony) on this host'],
      data: { skew_ms: skewMs, serial: expired.serial, not_after: expired.window.notAfter.toISOString() },
    },
  )
}

function refusal(status: number, body: unknown, expired: Identity, retryAfter?: string | string[]): FleetkitError {
  const code = errorCodeOf(body)
  const fresh = [
    'issue a fresh secret (fleetkit node token NODE --reissue), remove the staged identity and run fleetkit-agent enroll',
  ]
  if (code === 'recovery_window_expired') {
    return new FleetkitError(
      'RECOVERY_WINDOW_EXPIRED',
      `certificate ${expired.serial} expired at ${expired.window.notAfter.toISOString()}, longer ago than the gateway's recovery window`,
      { actions: fresh, data: { serial: expired.serial } },
    )
  }
  if (code === 'recovery_refused') {
    return new FleetkitError('RECOVERY_REFUSED', `the gateway refused to recover certificate ${expired.serial}`, {
      actions: fresh,
      data: { serial: expired.serial },
    })
  }
  // Shed (429/503): the run loop waits the Retry-After plus jitter before trying again.
  const later = isRetryLaterStatus(status) && retryAfter !== undefined ? { retry_after: retryAfter } : {}
  return new FleetkitError(
    'AGENT_RENEWAL_FAILED',
    `the gateway answered ${status} ${code ?? ''} to the recovery of certificate ${expired.serial}`.trim(),
    {
      actions: ['fleetkit-agent doctor'],
      data: { status, gateway_code: code ?? null, ...later },
    },
  )
}
