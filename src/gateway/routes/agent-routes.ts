// The mTLS agent routes (spec 05): heartbeat, lease, job heartbeat and completion with
// lease tokens, certificate renewal and identity. Authentication happens before these run.
import { randomBytes } from 'node:crypto'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { sha256Hex } from '../../pki/fingerprint.js'
import { isRenewalDue, renewalDueAt } from '../../pki/renewal.js'
import {
  AGENT_PATHS,
  CLEANUP_LIST_MAX,
  type HealthResponse,
  type HeartbeatResponse,
  type JobCompleteResponse,
  type JobHeartbeatResponse,
  type LeaseResponse,
  type NodeLostBody,
  type NodeNotActiveBody,
  readHeartbeatRequest,
  readJobCompleteRequest,
  readJobHeartbeatRequest,
  readLeaseRequest,
} from '../../protocol/agent-routes.js'
import {
  type IdentityResponse,
  type RenewalNotDueBody,
  type RenewResponse,
  readRenewRequest,
} from '../../protocol/renewal.js'
import { readRequest } from '../../protocol/read.js'
import { trustBundleDigest } from '../../pki/trust-bundle-digest.js'
import { insertNodeCertificate } from '../../store/pki/certificates.js'
import { withTransaction } from '../../store/database.js'
import { lockIssuance } from '../../store/pki/issuance-guard.js'
import { appendEvent } from '../../store/events.js'
import { completeJob, extendJobLease, failExhaustedJobs, leaseNextJob } from '../../store/scheduling/jobs.js'
import { listCleanupJobIds, restoreUnhealthyNode } from '../../store/nodes/sweep.js'
import { getNode } from '../../store/nodes/nodes.js'
import type { AgentIdentity } from '../auth/agent-auth.js'
import type { GatewayContext } from './gateway-context.js'
import { PreparedJson } from './http.js'
import type { RequestContext, Route } from './router.js'

export function agentRoutes(g: GatewayContext): Route[] {
  // Heartbeats and renewals are cheap and keep nodes alive and trusted: shed last. Leases and jobs can wait.
  return [
    {
      method: 'GET',
      pattern: '/healthz',
      auth: 'check',
      shedding: 'last',
      handler: async (): Promise<HealthResponse> => ({ status: 'ok', database: 'up' }),
    },
    {
      method: 'POST',
      pattern: AGENT_PATHS.heartbeat,
      auth: 'mark',
      shedding: 'last',
      handler: (ctx) => heartbeat(g, ctx),
    },
    { method: 'POST', pattern: AGENT_PATHS.lease, auth: 'mark', handler: (ctx) => lease(g, ctx) },
    { method: 'POST', pattern: AGENT_PATHS.jobHeartbeat, auth: 'mark', handler: (ctx) => jobHeartbeat(g, ctx) },
    { method: 'POST', pattern: AGENT_PATHS.jobComplete, auth: 'mark', handler: (ctx) => jobComplete(g, ctx) },
    { method: 'POST', pattern: AGENT_PATHS.renew, auth: 'mark', shedding: 'last', handler: (ctx) => renew(g, ctx) },
    {
      method: 'GET',
      pattern: AGENT_PATHS.identity,
      auth: 'mark',
      handler: async (ctx) => ({ ...identity(ctx), ca_bundle_pem: g.pki().bundlePem }),
    },
  ]
}

function who(ctx: RequestContext): AgentIdentity {
  if (!ctx.identity) throw new Error('agent route reached without an identity')
  return ctx.identity
}

/** The digest of the running bundle, computed once per bundle (heartbeats are frequent, the bundle rarely changes). */
let lastDigest: { pem: string; digest: string } | undefined
function bundleDigestOf(pem: string): string {
  if (lastDigest?.pem !== pem) lastDigest = { pem, digest: trustBundleDigest(pem) }
  return lastDigest.digest
}

async function heartbeat(g: GatewayContext, ctx: RequestContext): Promise<PreparedJson<HeartbeatResponse>> {
  const id = who(ctx)
  const { facts, drift } = readRequest(readHeartbeatRequest, await ctx.body())
  // Coalesced: written with every other node's beat in the next batch (at most one transaction a second).
  g.coalescer.add({ nodeId: id.nodeId, seenAt: ctx.now, facts })
  // Judged in memory and in the background: an unchanged digest reads and writes nothing.
  g.drift.observe(id.nodeId, drift, ctx.now)
  // A rotation began: tell the agent now rather than at its planned point (it jitters the renewal).
  const pki = g.pki()
  return heartbeatAnswer(
    id.nodeStatus,
    id.certificate.issuerCaSha256 !== pki.ca.fingerprintSha256,
    bundleDigestOf(pki.bundlePem),
  )
}

/**
 * The answers heartbeats get, serialized once: one per node status and renewal flag, for the bundle digest
 * in use (a new bundle starts a new set). Node statuses are a handful, so the set stays small.
 */
let answers: { digest: string; byKey: Map<string, PreparedJson<HeartbeatResponse>> } | undefined
function heartbeatAnswer(status: string, renewalDue: boolean, digest: string): PreparedJson<HeartbeatResponse> {
  if (answers?.digest !== digest) answers = { digest, byKey: new Map() }
  const key = renewalDue ? `${status} renewal_due` : status
  let answer = answers.byKey.get(key)
  if (answer === undefined) {
    const body: HeartbeatResponse = renewalDue
      ? { node_status: status, renewal_due: true, trust_bundle_sha256: digest }
      : { node_status: status, trust_bundle_sha256: digest }
    answer = new PreparedJson(body)
    answers.byKey.set(key, answer)
  }
  return answer
}

async function lease(g: GatewayContext, ctx: RequestContext): Promise<LeaseResponse> {
  const id = who(ctx)
  const { facts } = readRequest(readLeaseRequest, await ctx.body())
  g.coalescer.add({ nodeId: id.nodeId, seenAt: ctx.now, facts })
  // The status is read fresh: a lease must never go to a node that just stopped being active.
  const node = await getNode(g.pool, id.nodeId)
  let status = node?.status ?? 'unknown'
  // An unhealthy node that asks for work is talking again: this request restores it (spec 06).
  if (status === 'unhealthy' && (await restoreUnhealthyNode(g.pool, id.nodeId))) {
    g.auth.evictNode(id.nodeId)
    status = 'active'
  }
  if (status === 'lost') {
    g.lifecycleMetrics.leases.inc({ outcome: 'node_lost' })
    const cleanup = await listCleanupJobIds(g.pool, id.nodeId, CLEANUP_LIST_MAX)
    const body: NodeLostBody = { cleanup: cleanup.map((jobId) => ({ job_id: jobId })) }
    throw new FleetkitError('NODE_LOST', 'this node was declared lost: abandon its jobs', { data: { body } })
  }
  if (status !== 'active') {
    g.lifecycleMetrics.leases.inc({ outcome: 'node_not_active' })
    const body: NodeNotActiveBody = { node_status: status }
    throw new FleetkitError('NODE_NOT_ACTIVE', `this node is ${status}, not active: no new jobs`, { data: { body } })
  }
  await failExhaustedJobs(g.pool, id.nodeId)
  const token = randomBytes(32).toString('base64url')
  // The database sets and judges the expiry; the reply states it in this gateway's time (server_time's frame).
  const leaseExpiresAt = new Date(ctx.now.getTime() + g.jobLeaseSeconds * 1000)
  const job = await leaseNextJob(g.pool, {
    nodeId: id.nodeId,
    leaseTokenSha256: tokenHash(token),
    leaseSeconds: g.jobLeaseSeconds,
  })
  g.lifecycleMetrics.leases.inc({ outcome: job ? 'leased' : 'none' })
  if (!job) return { job: null }
  return {
    job: {
      id: job.id,
      kind: job.kind,
      payload: job.payload,
      lease_token: token,
      lease_expires_at: leaseExpiresAt.toISOString(),
      attempt: job.attempts,
    },
  }
}

function tokenHash(token: string): Buffer {
  return Buffer.from(sha256Hex(Buffer.from(token, 'utf8')), 'hex')
}

function conflict(jobId: string): FleetkitError {
  return new FleetkitError(
    'LEASE_CONFLICT',
    'the lease token is stale or the job is no longer leased to this node; nothing was written',
    { data: { jobId } },
  )
}

async function jobHeartbeat(g: GatewayContext, ctx: RequestContext): Promise<JobHeartbeatResponse> {
  const id = who(ctx)
  const { lease_token: token } = readRequest(readJobHeartbeatRequest, await ctx.body())
  const jobId = ctx.params.id!
  const leaseExpiresAt = new Date(ctx.now.getTime() + g.jobLeaseSeconds * 1000)
  if (
    !(await extendJobLease(g.pool, {
      jobId,
      nodeId: id.nodeId,
      leaseTokenSha256: tokenHash(token),
      leaseSeconds: g.jobLeaseSeconds,
    }))
  )
    throw conflict(jobId)
  return { job_id: jobId, lease_expires_at: leaseExpiresAt.toISOString() }
}

async function jobComplete(g: GatewayContext, ctx: RequestContext): Promise<JobCompleteResponse> {
  const id = who(ctx)
  // The result is read whole before anything is written: an unreadable result is refused, never stored.
  const done = readRequest(readJobCompleteRequest, await ctx.body())
  const jobId = ctx.params.id!
  if (
    !(await completeJob(g.pool, {
      jobId,
      nodeId: id.nodeId,
      leaseTokenSha256: tokenHash(done.lease_token),
      status: done.status,
      result: done.result,
      now: ctx.now,
    }))
  ) {
    g.lifecycleMetrics.leases.inc({ outcome: 'completion_conflict' })
    throw conflict(jobId)
  }
  return { job_id: jobId, status: done.status }
}

async function renew(g: GatewayContext, ctx: RequestContext): Promise<RenewResponse> {
  const id = who(ctx)
  const decision = g.renewLimiter.take(ctx.remote)
  if (!decision.allowed) {
    g.metrics.renewals.inc({ outcome: 'rate_limited' })
    throw new FleetkitError(
      'RATE_LIMITED',
      `too many renewals (${decision.scope}); retry after ${decision.retryAfterSeconds} s`,
      { data: { retryAfterSeconds: decision.retryAfterSeconds } },
    )
  }
  const current = id.certificate
  const pki = g.pki()
  if (!isRenewalDue(current, pki.ca.fingerprintSha256, ctx.now)) {
    g.metrics.renewals.inc({ outcome: 'not_due' })
    const body: RenewalNotDueBody = { renewal_due_at: renewalDueAt(current).toISOString() }
    throw new FleetkitError(
      'RENEWAL_NOT_DUE',
      `more than a third of the certificate's lifetime is left; renewal is due from ${body.renewal_due_at}`,
      { data: { body } },
    )
  }
  const request = readRequest(readRenewRequest, await ctx.body())
  const csr = await g.issuer.checkRequest(request.csr_pem, id.nodeId)
  if (!csr.ok) {
    g.metrics.renewals.inc({ outcome: 'csr_invalid' })
    throw new FleetkitError('RENEWAL_CSR_INVALID', `the CSR is not acceptable: ${csr.reason}`)
  }
  const issued = await withTransaction(g.pool, async (client) => {
    await lockIssuance(client, pki.ca)
    const cert = await g.issuer.issue({
      ca: pki.ca,
      publicKeyDer: csr.publicKeyDer,
      nodeId: id.nodeId,
      now: ctx.now,
      lifetimeSeconds: g.agentCertLifetimeSeconds,
    })
    const row = await insertNodeCertificate(client, {
      nodeId: id.nodeId,
      fingerprintSha256: cert.fingerprintSha256,
      serial: cert.serial,
      notBefore: cert.notBefore,
      notAfter: cert.notAfter,
      issuerCaSha256: cert.issuerCaSha256,
      replacesId: current.id,
      now: ctx.now,
    })
    await appendEvent(client, {
      kind: 'certificate_renewed',
      nodeId: id.nodeId,
      at: ctx.now,
      data: {
        serial: cert.serial,
        replaces_serial: current.serial,
        not_after: cert.notAfter.toISOString(),
        certificate_id: row.id,
      },
    })
    return cert
  })
  g.metrics.renewals.inc({ outcome: 'issued' })
  return {
    certificate_pem: issued.certificatePem,
    ca_bundle_pem: pki.bundlePem,
    not_after: issued.notAfter.toISOString(),
  }
}

function identity(ctx: RequestContext): IdentityResponse {
  const id = who(ctx)
  const c = id.certificate
  return {
    node_id: id.nodeId,
    status: id.nodeStatus,
    certificate: {
      serial: c.serial,
      not_before: c.notBefore.toISOString(),
      not_after: c.notAfter.toISOString(),
      fingerprint_sha256: c.fingerprintSha256,
      issuer_ca_sha256: c.issuerCaSha256,
    },
  }
}
