// POST /v1/enroll (spec 05 "Enrollment"): CSR checked before the secret, one conditional
// UPDATE consumes the secret, and the certificate is issued and stored in that same transaction;
// the same secret and key again (a lost answer) get that certificate back.
import { FleetkitError } from '../../checks/fleetkit-error.js'
import { sha256Hex } from '../../pki/fingerprint.js'
import type { HealthResponse } from '../../protocol/agent-routes.js'
import { ENROLL_PATH, type EnrollResponse, readEnrollRequest } from '../../protocol/enrollment.js'
import { readRequest } from '../../protocol/read.js'
import { findEnrollmentReplay, insertNodeCertificate, revokeNodeCertificates } from '../../store/pki/certificates.js'
import { withTransaction } from '../../store/database.js'
import { lockIssuance } from '../../store/pki/issuance-guard.js'
import { appendEvent } from '../../store/events.js'
import { consumeEnrollmentSecret } from '../../store/nodes/enrollment-secrets.js'
import type { GatewayContext } from './gateway-context.js'
import type { RequestContext, Route } from './router.js'

export function enrollRoutes(g: GatewayContext): Route[] {
  // Enrollment is the most expensive request (a signature, a transaction) and can wait: shed first.
  return [
    { method: 'POST', pattern: ENROLL_PATH, auth: 'none', shedding: 'first', handler: (ctx) => enroll(g, ctx) },
    {
      method: 'GET',
      pattern: '/healthz',
      auth: 'none',
      shedding: 'last',
      handler: async (): Promise<HealthResponse> => ({ status: 'ok', database: 'up' }),
    },
  ]
}

async function enroll(g: GatewayContext, ctx: RequestContext): Promise<EnrollResponse> {
  const decision = g.enrollLimiter.take(ctx.remote)
  if (!decision.allowed) {
    g.metrics.enrollments.inc({ outcome: 'rate_limited' })
    throw new FleetkitError(
      'RATE_LIMITED',
      `too many enrollment attempts (${decision.scope}); retry after ${decision.retryAfterSeconds} s`,
      { data: { retryAfterSeconds: decision.retryAfterSeconds } },
    )
  }
  const body = await ctx.body()
  let request
  try {
    request = readRequest(readEnrollRequest, body)
  } catch (error) {
    g.metrics.enrollments.inc({ outcome: 'invalid' })
    throw error
  }
  const { node_id: nodeId, enrollment_secret: secret } = request
  ctx.note.nodeId = nodeId
  // 1. The CSR first: a bad request neither uses the secret up nor writes anything.
  const csr = await g.issuer.checkRequest(request.csr_pem, nodeId)
  if (!csr.ok) {
    g.metrics.enrollments.inc({ outcome: 'csr_invalid' })
    await recordRefusal(g, nodeId, 'csr_invalid')
    throw new FleetkitError('ENROLLMENT_CSR_INVALID', `the CSR is not acceptable: ${csr.reason}`, { data: { nodeId } })
  }
  const secretSha256 = Buffer.from(sha256Hex(Buffer.from(secret, 'utf8')), 'hex')
  const now = ctx.now
  const pki = g.pki()
  // 2 and 3 in one transaction: consumption, issuance and storage commit together or not at all.
  const publicKeySha256 = Buffer.from(sha256Hex(new Uint8Array(csr.publicKeyDer)), 'hex')
  const outcome = await withTransaction(g.pool, async (client) => {
    await lockIssuance(client, pki.ca)
    if (!(await consumeEnrollmentSecret(client, nodeId, secretSha256, now))) {
      // The same secret and key again: the first answer was lost (a gateway died after the
      // commit). Answer with the certificate already issued, so the node is not stranded.
      const replay = await findEnrollmentReplay(client, nodeId, secretSha256, publicKeySha256, now)
      return replay
        ? { replayed: true as const, certificatePem: replay.certificatePem, notAfter: replay.notAfter }
        : undefined
    }
    const cert = await g.issuer.issue({
      ca: pki.ca,
      publicKeyDer: csr.publicKeyDer,
      nodeId,
      now,
      lifetimeSeconds: g.agentCertLifetimeSeconds,
    })
    // A fresh enrollment replaces whatever identity the node had before.
    await revokeNodeCertificates(client, nodeId, now)
    await insertNodeCertificate(client, {
      nodeId,
      fingerprintSha256: cert.fingerprintSha256,
      serial: cert.serial,
      notBefore: cert.notBefore,
      notAfter: cert.notAfter,
      issuerCaSha256: cert.issuerCaSha256,
      now,
      certificatePem: cert.certificatePem,
      publicKeySha256,
    })
    await appendEvent(client, {
      kind: 'node_enrolled',
      nodeId,
      at: now,
      data: { serial: cert.serial, fingerprint_sha256: cert.fingerprintSha256, not_after: cert.notAfter.toISOString() },
    })
    return { replayed: false as const, certificatePem: cert.certificatePem, notAfter: cert.notAfter }
  })
  if (!outcome) {
    g.metrics.enrollments.inc({ outcome: 'refused' })
    // The same answer for an unknown node, a wrong, expired or used secret, another key and a wrong state.
    await recordRefusal(g, nodeId, 'refused')
    throw new FleetkitError('ENROLLMENT_REFUSED', 'enrollment refused', { data: { nodeId } })
  }
  g.afterEnrollmentCommit?.()
  g.auth.evictNode(nodeId)
  g.metrics.enrollments.inc({ outcome: outcome.replayed ? 'replayed' : 'issued' })
  return { certificate_pem: outcome.certificatePem, ca_pem: pki.bundlePem, not_after: outcome.notAfter.toISOString() }
}

/** Every refused enrollment is an event (issue 11): the claimed node id and why, never the secret. */
async function recordRefusal(g: GatewayContext, nodeId: string, reason: 'csr_invalid' | 'refused'): Promise<void> {
  try {
    await appendEvent(g.pool, { kind: 'enrollment_refused', nodeId, data: { reason } })
  } catch (error) {
    // The refusal stands either way; a lost audit line must not turn a 401 into a 500.
    g.logger('warn', 'event_write_failed', { kind: 'enrollment_refused', error: (error as Error).message })
  }
}
