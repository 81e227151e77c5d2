// Recovery on the enrollment listener (spec 05 "A node that was away can come back"): a node whose
// latest certificate expired within the recovery window proves possession of its key by signing a
// gateway challenge and gets a new certificate. Rate limited like enrollment; retired and lost nodes never.
import { FleetkitError } from '../../checks/fleetkit-error.js'
import { certificateFingerprintSha256 } from '../../pki/fingerprint.js'
import { challengeSignedBy, issueChallenge, readChallenge } from '../../pki/recovery-challenge.js'
import {
  RECOVER_CHALLENGE_PATH,
  RECOVER_PATH,
  type RecoverChallengeResponse,
  type RecoverResponse,
  readRecoverChallengeRequest,
  readRecoverRequest,
} from '../../protocol/recovery.js'
import { recoverySignedBytes } from '../../pki/recovery-signature.js'
import { readRequest } from '../../protocol/read.js'
import {
  findCertificateByFingerprint,
  insertNodeCertificate,
  revokeNodeCertificates,
} from '../../store/pki/certificates.js'
import { withTransaction } from '../../store/database.js'
import { appendEvent } from '../../store/events.js'
import {
  consumeRecoveryCounter,
  latestAgentCertificateId,
  readRecoveryCounter,
  RECOVERABLE_STATUSES,
} from '../../store/nodes/recovery.js'
import type { GatewayContext } from './gateway-context.js'
import { lockIssuance } from '../../store/pki/issuance-guard.js'
import type { RequestContext, Route } from './router.js'

export const DEFAULT_RECOVERY_WINDOW_SECONDS = 7 * 86400

export function recoverRoutes(g: GatewayContext): Route[] {
  return [
    {
      method: 'POST',
      pattern: RECOVER_CHALLENGE_PATH,
      auth: 'none',
      shedding: 'first',
      handler: (ctx) => challenge(g, ctx),
    },
    { method: 'POST', pattern: RECOVER_PATH, auth: 'none', shedding: 'first', handler: (ctx) => recover(g, ctx) },
  ]
}

function limit(g: GatewayContext, ctx: RequestContext): void {
  const decision = g.enrollLimiter.take(ctx.remote)
  if (!decision.allowed) {
    g.metrics.enrollments.inc({ outcome: 'recovery_rate_limited' })
    throw new FleetkitError(
      'RATE_LIMITED',
      `too many recovery attempts (${decision.scope}); retry after ${decision.retryAfterSeconds} s`,
      { data: { retryAfterSeconds: decision.retryAfterSeconds } },
    )
  }
}

function refused(g: GatewayContext, nodeId: string, reason: string): FleetkitError {
  g.metrics.enrollments.inc({ outcome: 'recovery_refused' })
  // One answer for every reason (the reason is logged): a refusal does not tell what exists.
  return new FleetkitError('RECOVERY_REFUSED', 'recovery refused', { data: { nodeId, reason } })
}

async function challenge(g: GatewayContext, ctx: RequestContext): Promise<RecoverChallengeResponse> {
  limit(g, ctx)
  const { node_id: nodeId } = readRequest(readRecoverChallengeRequest, await ctx.body())
  ctx.note.nodeId = nodeId
  // An unknown node gets a challenge too (counter 0), so this route does not tell which nodes exist.
  const counter = (await readRecoveryCounter(g.pool, nodeId)) ?? 0
  const issued = issueChallenge(g.pki().server.privateKeyPem, { nodeId, counter, now: ctx.now })
  return { challenge: issued.challenge, expires_at: issued.expiresAt.toISOString() }
}

async function recover(g: GatewayContext, ctx: RequestContext): Promise<RecoverResponse> {
  limit(g, ctx)
  const request = readRequest(readRecoverRequest, await ctx.body())
  const nodeId = request.node_id
  ctx.note.nodeId = nodeId
  const pki = g.pki()
  const claims = readChallenge(pki.server.privateKeyPem, request.challenge, ctx.now)
  if (!claims || claims.nodeId !== nodeId) throw refused(g, nodeId, 'challenge')
  let fingerprint: string
  try {
    fingerprint = certificateFingerprintSha256(request.certificate_pem)
  } catch {
    throw refused(g, nodeId, 'certificate')
  }
  const presented = await findCertificateByFingerprint(g.pool, fingerprint)
  if (!presented || presented.nodeId !== nodeId || presented.purpose !== 'agent')
    throw refused(g, nodeId, 'certificate')
  const signatureVersion = request.signature_version ?? 1
  const signed = recoverySignedBytes(request.challenge, request.csr_pem, signatureVersion)
  if (!challengeSignedBy(request.certificate_pem, signed, request.signature)) throw refused(g, nodeId, 'signature')
  // An agent from before version 2 signed the challenge alone: still accepted, so it can come back, and said.
  if (signatureVersion === 1) g.logger('warn', 'recovery_signature_unbound', { node_id: nodeId })
  if (presented.revokedAt !== null || (await latestAgentCertificateId(g.pool, nodeId)) !== presented.id)
    throw refused(g, nodeId, 'not_latest')
  if (!(RECOVERABLE_STATUSES as readonly string[]).includes(presented.nodeStatus))
    throw refused(g, nodeId, `status_${presented.nodeStatus}`)
  if (ctx.now.getTime() < presented.notAfter.getTime()) throw refused(g, nodeId, 'not_expired')
  const expiredSeconds = Math.floor((ctx.now.getTime() - presented.notAfter.getTime()) / 1000)
  if (expiredSeconds > g.recoveryWindowSeconds) {
    g.metrics.enrollments.inc({ outcome: 'recovery_window_expired' })
    throw new FleetkitError(
      'RECOVERY_WINDOW_EXPIRED',
      `the certificate expired ${expiredSeconds} s ago, longer than the recovery window (${g.recoveryWindowSeconds} s); the node needs a new enrollment secret`,
      {
        data: {
          nodeId,
          body: { expired_at: presented.notAfter.toISOString(), recovery_window_seconds: g.recoveryWindowSeconds },
        },
      },
    )
  }
  const csr = await g.issuer.checkRequest(request.csr_pem, nodeId)
  if (!csr.ok) {
    g.metrics.enrollments.inc({ outcome: 'csr_invalid' })
    throw new FleetkitError('ENROLLMENT_CSR_INVALID', `the CSR is not acceptable: ${csr.reason}`, { data: { nodeId } })
  }
  const issued = await withTransaction(g.pool, async (client) => {
    await lockIssuance(client, pki.ca)
    if (!(await consumeRecoveryCounter(client, nodeId, claims.counter, ctx.now))) return undefined
    const cert = await g.issuer.issue({
      ca: pki.ca,
      publicKeyDer: csr.publicKeyDer,
      nodeId,
      now: ctx.now,
      lifetimeSeconds: g.agentCertLifetimeSeconds,
    })
    await revokeNodeCertificates(client, nodeId, ctx.now)
    await insertNodeCertificate(client, {
      nodeId,
      fingerprintSha256: cert.fingerprintSha256,
      serial: cert.serial,
      notBefore: cert.notBefore,
      notAfter: cert.notAfter,
      issuerCaSha256: cert.issuerCaSha256,
      replacesId: presented.id,
      now: ctx.now,
    })
    await appendEvent(client, {
      kind: 'node_recovered',
      nodeId,
      at: ctx.now,
      data: {
        serial: cert.serial,
        replaces_serial: presented.serial,
        expired_seconds: expiredSeconds,
        recovery: claims.counter + 1,
        signature: signatureVersion === 2 ? 'challenge_and_csr' : 'challenge_only',
      },
    })
    return cert
  })
  if (!issued) throw refused(g, nodeId, 'challenge_used')
  g.auth.evictNode(nodeId)
  g.metrics.enrollments.inc({ outcome: 'recovered' })
  return { certificate_pem: issued.certificatePem, ca_pem: pki.bundlePem, not_after: issued.notAfter.toISOString() }
}
