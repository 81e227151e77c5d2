// Names a CA rotation the agent missed instead of "an unreachable gateway". After `fleetkit ca
// rotate --complete` the gateway presents a server certificate from the new CA and trusts only the
// new CA; an agent that was away keeps a trust bundle and a certificate from the old one, and every
// handshake fails with a verification error or a TLS alert. Which CA the gateway presents is read
// from an unverified handshake, used only to word the error (nothing is trusted or sent on it).
import { X509Certificate } from 'node:crypto'
import { stat } from 'node:fs/promises'
import { isIP } from 'node:net'
import { connect } from 'node:tls'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { certificatePems } from '../pki/pem.js'
import type { AgentConfig } from './config.js'
import { type Identity, identityPaths } from './identity.js'
import { probeUrls } from './session.js'

/** Our check of the gateway's certificate failed: it does not chain to a CA we trust. */
const SERVER_NOT_TRUSTED =
  /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_SIGNATURE_FAILURE)$/
/** The gateway's alert about our certificate (or a reset where the alert was lost). */
const CLIENT_NOT_TRUSTED = /^(ERR_SSL_TLSV1_ALERT_UNKNOWN_CA|ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE|ECONNRESET|EPROTO)$/

interface AgentTrust {
  /** The CA bundle the agent verifies the gateway with. */
  caPem: string
  /** Where that bundle is (named in the message). */
  caFile: string
  /** The CA file the seed pinned (FLEETKIT_GATEWAY_CA_FILE): what enrollment verifies the gateway with. */
  pinnedFile: string
  /** The agent's own certificate; undefined before it enrolled (only the gateway's side is judged then). */
  certificatePem: string | undefined
}

/** The certificate a TLS server presents, read without verifying it; undefined when none could be read. */
type PresentedCertificate = (url: string) => Promise<X509Certificate | undefined>

/**
 * GATEWAY_CA_ROTATED when `transportCode` is a TLS failure and the gateway presents a certificate
 * from a CA other than the agent's; undefined when the failure has another cause.
 * `urls`: listeners to read the presented certificate from, the first that answers counts.
 */
async function explainCaRotation(
  transportCode: string,
  target: string,
  trust: AgentTrust,
  urls: readonly string[],
  presented: PresentedCertificate = presentedCertificate,
): Promise<FleetkitError | undefined> {
  const serverSide = SERVER_NOT_TRUSTED.test(transportCode)
  if (!serverSide && !CLIENT_NOT_TRUSTED.test(transportCode)) return undefined
  let peer: X509Certificate | undefined
  for (const url of urls) {
    peer = await presented(url).catch(() => undefined)
    if (peer) break
  }
  if (!peer) return undefined
  const trusted = certificatePems(trust.caPem).map((pem) => new X509Certificate(pem))
  const gatewayCa = oneLine(peer.issuer)
  // The way back, as it works: the node's old identity is revoked (or will be), so it needs a new secret
  // (--reissue: the node enrolled before) and, to reach the gateway at all, the bundle of the new CA.
  const install = `install the control host's current ca-bundle.pem (in its PKI directory) as ${trust.pinnedFile}, the CA file the seed pinned`
  const actions =
    trust.certificatePem === undefined
      ? [
          `fleetkit ca rotate --status (on the operator's machine): the gateway's CA now is "${gatewayCa}"`,
          `${install}, then run fleetkit-agent enroll again (an unused secret stays valid until it expires)`,
        ]
      : [
          `fleetkit ca rotate --status (on the operator's machine): the gateway's CA now is "${gatewayCa}"`,
          `fleetkit node token NODE --reissue (on the operator's machine), and write the secret to the agent's secret file`,
          `${install}, move agent.key, agent.pem and gateway-ca.pem out of the agent's PKI directory, and run fleetkit-agent enroll`,
          // The agent cannot tell a node that was away from one retired meanwhile: it retries until told.
          'if the node was decommissioned meanwhile, stop this agent: systemctl disable --now fleetkit-agent',
        ]
  if (serverSide) {
    if (trusted.some((ca) => issued(peer, ca))) return undefined
    return new FleetkitError(
      'GATEWAY_CA_ROTATED',
      `the gateway at ${target} presents a certificate from a CA this agent does not trust yet: its issuer is named "${gatewayCa}", but none of the CAs in ${trust.caFile} (${trusted.map(describeCa).join(', ') || 'none'}) signed it, and CAs of one fleet may share a name: the fleet's CA was rotated while this agent was away`,
      { actions, data: { target, transport_code: transportCode, gateway_ca: gatewayCa } },
    )
  }
  // The gateway refused our certificate: a rotation when the CA that issued it is not the gateway's now.
  if (trust.certificatePem === undefined) return undefined
  const own = new X509Certificate(trust.certificatePem)
  const ownCa = trusted.find((ca) => issued(own, ca))
  if (ownCa && issued(peer, ownCa)) return undefined
  if (!ownCa && oneLine(own.issuer) === gatewayCa) return undefined
  return new FleetkitError(
    'GATEWAY_CA_ROTATED',
    `the gateway at ${target} refused this agent's certificate (${transportCode}): it was issued by ${ownCa ? describeCa(ownCa) : `"${oneLine(own.issuer)}"`}, which did not sign the certificate the gateway presents now (its issuer is named "${gatewayCa}"; CAs of one fleet may share a name): the fleet's CA rotation completed before this agent renewed`,
    { actions, data: { target, transport_code: transportCode, gateway_ca: gatewayCa } },
  )
}

/**
 * `error` as GATEWAY_CA_ROTATED when it is an unreachable gateway whose cause is a CA rotation this
 * agent missed; `error` itself otherwise. Used by `doctor` and by the run loop's failed calls.
 */
export async function namingMissedRotation(
  error: FleetkitError,
  config: AgentConfig,
  identity: Pick<Identity, 'caPem' | 'certificatePem'>,
): Promise<FleetkitError> {
  if (error.code !== 'GATEWAY_UNREACHABLE') return error
  // The gateway that failed (with several, the agent may have moved on from it since): else the first.
  const target = typeof error.data?.target === 'string' ? error.data.target : config.gatewayUrl
  const rotated = await explainCaRotation(
    String(error.data?.transport_code ?? ''),
    target,
    {
      caPem: identity.caPem,
      caFile: await trustFile(config),
      pinnedFile: config.caFile,
      certificatePem: identity.certificatePem,
    },
    probeUrls(config, target),
  )
  return rotated ?? error
}

/**
 * `error` as GATEWAY_CA_ROTATED when an agent without an identity yet (enroll, doctor before enrollment)
 * cannot verify the gateway because the fleet's CA was rotated after its seed pinned `caPem`; `error`
 * itself otherwise. Without this, enrolling a host that was away ends in a bare TLS error.
 */
export async function namingRotatedPin(
  error: FleetkitError,
  config: Pick<AgentConfig, 'caFile'>,
  caPem: string,
  target: string,
  presented: PresentedCertificate = presentedCertificate,
): Promise<FleetkitError> {
  if (error.code !== 'GATEWAY_UNREACHABLE') return error
  const rotated = await explainCaRotation(
    String(error.data?.transport_code ?? ''),
    target,
    { caPem, caFile: config.caFile, pinnedFile: config.caFile, certificatePem: undefined },
    [target],
    presented,
  )
  return rotated ?? error
}

/** The bundle the agent verifies the gateway with: the one staged beside its key, else the configured CA file. */
async function trustFile(config: AgentConfig): Promise<string> {
  const kept = identityPaths(config.pkiDir).caBundle
  try {
    await stat(kept)
    return kept
  } catch {
    return config.caFile
  }
}

function issued(certificate: X509Certificate, ca: X509Certificate): boolean {
  return certificate.checkIssued(ca) && certificate.verify(ca.publicKey)
}

/** A CA as a person can tell it apart: CAs of one fleet may share a name (`fleetkit CA <date>`), not a fingerprint. */
function describeCa(ca: X509Certificate): string {
  return `"${oneLine(ca.subject)}" sha256 ${ca.fingerprint256.replaceAll(':', '').toLowerCase().slice(0, 16)}`
}

function oneLine(name: string): string {
  return name.split('\n').join(', ')
}

/** An unverified TLS handshake without a client certificate; the server's certificate or undefined. */
function presentedCertificate(url: string, timeoutMs = 5000): Promise<X509Certificate | undefined> {
  const { hostname, port } = new URL(url)
  const host = hostname.replace(/^\[|\]$/g, '')
  return new Promise((resolve) => {
    const socket = connect({
      host,
      port: Number(port || 443),
      rejectUnauthorized: false,
      ...(isIP(host) === 0 ? { servername: host } : {}),
    })
    const done = (certificate: X509Certificate | undefined) => {
      socket.destroy()
      resolve(certificate)
    }
    socket.setTimeout(timeoutMs, () => done(undefined))
    socket.once('secureConnect', () => {
      const raw = socket.getPeerCertificate().raw as Buffer | undefined
      done(raw ? new X509Certificate(raw) : undefined)
    })
    socket.once('error', () => done(undefined))
  })
}
