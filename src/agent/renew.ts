// One renewal: a new key and CSR, POST /v1/agent/certificate/renew, restage key,
// certificate and the returned bundle, then prove the new identity on /healthz and swap it in.
import { FleetkitError } from '../checks/fleetkit-error.js'
import type { Logger } from '../log/logger.js'
import { AGENT_PATHS, errorCodeOf } from '../protocol/agent-routes.js'
import { type RenewRequest, readRenewResponse } from '../protocol/renewal.js'
import { readResponse } from '../protocol/read.js'
import { isRetryLaterStatus } from './backoff.js'
import { explainTransportError } from './clock-skew.js'
import { joinBundles, matchesKey } from './enroll.js'
import { type Identity, certificateWindow, stageIdentity } from './identity.js'
import { generateKeyAndCsr } from './key-and-csr.js'
import { type AgentSession, probeUrls } from './session.js'

export type RenewOutcome = { outcome: 'renewed'; notAfter: string; serial: string } | { outcome: 'not-due' }

export async function renewCertificate(session: AgentSession, log: Logger): Promise<RenewOutcome> {
  const config = session.config
  const { keyPem, csrPem } = await generateKeyAndCsr(config.nodeId)
  const request: RenewRequest = { csr_pem: csrPem }
  const response = await session.call('POST', AGENT_PATHS.renew, request)
  const gatewayCode = errorCodeOf(response.body)
  if (response.status === 409 && gatewayCode === 'renewal_not_due') {
    log('info', 'renewal_not_due', { serial: session.identity.serial })
    return { outcome: 'not-due' }
  }
  const renewed =
    response.status === 200 ? readResponse(readRenewResponse, response.body, AGENT_PATHS.renew) : undefined
  if (!renewed || !matchesKey(renewed.certificate_pem, keyPem)) {
    // A shed or refused-for-now renewal names the wait the gateway asked for; the run loop honours it with jitter.
    const retryAfter = isRetryLaterStatus(response.status) ? response.headers['retry-after'] : undefined
    throw new FleetkitError(
      'AGENT_RENEWAL_FAILED',
      `the gateway answered ${response.status} ${gatewayCode ?? ''} to the renewal of serial ${session.identity.serial}`.trim(),
      {
        actions: ['fleetkit-agent doctor', 'fleetkit-agent renew-certificate'],
        data: {
          status: response.status,
          gateway_code: gatewayCode ?? null,
          ...(retryAfter === undefined ? {} : { retry_after: retryAfter }),
        },
      },
    )
  }
  // The bundle the gateway sends is what it trusts now (old and new CA during a rotation).
  const caPem = joinBundles(renewed.ca_bundle_pem)
  const certificatePem = renewed.certificate_pem
  await stageIdentity(config.pkiDir, keyPem, certificatePem, caPem)
  const window = certificateWindow(certificatePem)
  const identity: Identity = {
    keyPem,
    certificatePem,
    caPem,
    window: { notBefore: window.notBefore, notAfter: window.notAfter },
    serial: window.serial,
    fingerprint256: window.fingerprint256,
  }
  log('info', 'certificate_staged', { serial: identity.serial, not_after: window.notAfter.toISOString() })

  const client = session.clientFor(identity)
  let healthy: boolean
  try {
    healthy = (await client.request('GET', '/healthz')).status === 200
  } catch (error) {
    client.close()
    const explained = await explainTransportError(error, client.baseUrl, probeUrls(config, client.baseUrl))
    throw new FleetkitError(
      'AGENT_RENEWAL_FAILED',
      `the renewed certificate ${identity.serial} failed its /healthz check: ${explained.message}`,
      {
        actions: ['systemd restarts the agent from the staged files', 'fleetkit-agent doctor'],
        data: { serial: identity.serial, cause_code: explained.code, staged: true },
      },
    )
  }
  if (!healthy) {
    client.close()
    throw new FleetkitError(
      'AGENT_RENEWAL_FAILED',
      `the renewed certificate ${identity.serial} got no 200 from /healthz`,
      { actions: ['fleetkit-agent doctor'], data: { serial: identity.serial, staged: true } },
    )
  }
  const previousSerial = session.identity.serial
  session.swap(identity, client)
  log('info', 'certificate_renewed', {
    serial: identity.serial,
    previous_serial: previousSerial,
    not_after: window.notAfter.toISOString(),
  })
  return { outcome: 'renewed', notAfter: window.notAfter.toISOString(), serial: identity.serial }
}
