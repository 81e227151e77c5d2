// The mTLS agent routes (spec 05): heartbeat, lease, job heartbeat and completion, renewal,
// identity. One type and one reader per request and response; the gateway and the agent both use them.
import { type ChecksJobResult, readChecksJobResult } from './check-result.js'
import { type DriftReport, readDriftReport } from './drift-report.js'
import { type HostFacts, readHostFacts } from './host-facts.js'
import {
  type Json,
  WireFormatError,
  field,
  printableText,
  readArray,
  readEnum,
  readInteger,
  ownFields,
  readObject,
  readString,
  readTime,
} from './wire-format.js'

/** The route patterns of the agent listener; `:id` is a job id (jobPath fills it in). */
export const AGENT_PATHS = {
  heartbeat: '/v1/agent/heartbeat',
  lease: '/v1/agent/lease',
  jobHeartbeat: '/v1/agent/jobs/:id/heartbeat',
  jobComplete: '/v1/agent/jobs/:id/complete',
  renew: '/v1/agent/certificate/renew',
  identity: '/v1/agent/identity',
} as const

export function jobPath(
  pattern: typeof AGENT_PATHS.jobHeartbeat | typeof AGENT_PATHS.jobComplete,
  jobId: string,
): string {
  return pattern.replace(':id', encodeURIComponent(jobId))
}

const LEASE_TOKEN_MAX = 256
/** A lost node's cleanup list is at most this long (spec 05). */
export const CLEANUP_LIST_MAX = 64

const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const NODE_STATUS = /^[a-z_]{1,32}$/
const ERROR_CODE = /^[a-z][a-z0-9_]{0,63}$/
const KIND = /^[a-z][a-z0-9_]{0,63}$/
export const HEX_SHA256 = /^[0-9a-f]{64}$/

const readJobId = (value: unknown, path: string) =>
  readString(value, path, { max: 36, pattern: JOB_ID, expected: 'a job id (UUID)' })
export const readNodeStatus = (value: unknown, path: string) =>
  readString(value, path, { max: 32, pattern: NODE_STATUS, expected: 'a node status' })
const readLeaseToken = (value: unknown, path: string) => readString(value, path, { max: LEASE_TOKEN_MAX })

// ---- heartbeat and lease: both carry host facts ----

export interface HeartbeatRequest {
  facts: HostFacts | null
  /**
   * The host's fingerprint digest (src/protocol/drift-report.ts), heartbeats only. Absent from older
   * agents: their node's drift is unknown.
   */
  drift?: DriftReport | null
}
export interface LeaseRequest {
  facts: HostFacts | null
}

export function readHeartbeatRequest(value: unknown): HeartbeatRequest {
  const body = ownFields<'facts' | 'drift'>(readObject(value, 'body'))
  return { facts: readHostFacts(body.facts, 'facts'), drift: readDriftReport(body.drift) }
}

export function readLeaseRequest(value: unknown): LeaseRequest {
  return { facts: readHostFacts(ownFields<'facts'>(readObject(value, 'body')).facts, 'facts') }
}

export interface HeartbeatResponse {
  node_status: string
  /**
   * True when the presented certificate was not issued by the gateway's current CA (a rotation
   * began): the agent renews at a jittered point of its next check interval. Absent from older gateways.
   */
  renewal_due?: boolean
  /**
   * trustBundleDigest (src/pki/trust-bundle-digest.ts) of the bundle the gateway trusts now: an
   * agent whose staged bundle differs (a rotation completed) fetches it from GET /v1/agent/identity.
   */
  trust_bundle_sha256?: string
}

export function readHeartbeatResponse(value: unknown): HeartbeatResponse {
  const body = readObject(value, 'body')
  const due = field(body, 'renewal_due')
  if (due !== undefined && typeof due !== 'boolean') throw new WireFormatError('renewal_due', 'must be a boolean')
  const digest = field(body, 'trust_bundle_sha256')
  return {
    node_status: readNodeStatus(field(body, 'node_status'), 'node_status'),
    ...(due === true ? { renewal_due: true } : {}),
    ...(digest === undefined
      ? {}
      : {
          trust_bundle_sha256: readString(digest, 'trust_bundle_sha256', {
            max: 64,
            pattern: HEX_SHA256,
            expected: 'a SHA-256 in hex',
          }),
        }),
  }
}

export interface LeasedJob {
  id: string
  kind: string
  payload: Json
  /** Random; only its SHA-256 is stored. Job heartbeats and completion present it. */
  lease_token: string
  lease_expires_at: string
  attempt: number
}

export interface LeaseResponse {
  job: LeasedJob | null
}

export function readLeaseResponse(value: unknown): LeaseResponse {
  const job = field(readObject(value, 'body'), 'job')
  if (job === null || job === undefined) return { job: null }
  const o = readObject(job, 'job')
  return {
    job: {
      id: readJobId(field(o, 'id'), 'job.id'),
      kind: readString(field(o, 'kind'), 'job.kind', { max: 64, pattern: KIND, expected: 'a job kind' }),
      payload: readObject(field(o, 'payload'), 'job.payload'),
      lease_token: readLeaseToken(field(o, 'lease_token'), 'job.lease_token'),
      lease_expires_at: readTime(field(o, 'lease_expires_at'), 'job.lease_expires_at'),
      attempt: readInteger(field(o, 'attempt'), 'job.attempt', 1, 1_000_000),
    },
  }
}

/** 403 node_lost: the node was declared lost; the jobs named here were fenced away from it. */
export interface NodeLostBody {
  cleanup: { job_id: string }[]
}

export function readNodeLostBody(value: unknown): NodeLostBody {
  const items = readArray(field(readObject(value, 'body'), 'cleanup'), 'cleanup', CLEANUP_LIST_MAX)
  return {
    cleanup: items.map((item, i) => ({
      job_id: readJobId(field(readObject(item, `cleanup[${i}]`), 'job_id'), `cleanup[${i}].job_id`),
    })),
  }
}

/** 403 node_not_active: no new jobs for a node in this status. */
export interface NodeNotActiveBody {
  node_status: string
}

// ---- jobs ----

export interface JobHeartbeatRequest {
  lease_token: string
}

export function readJobHeartbeatRequest(value: unknown): JobHeartbeatRequest {
  return { lease_token: readLeaseToken(field(readObject(value, 'body'), 'lease_token'), 'lease_token') }
}

export interface JobHeartbeatResponse {
  job_id: string
  lease_expires_at: string
}

export function readJobHeartbeatResponse(value: unknown): JobHeartbeatResponse {
  const o = readObject(value, 'body')
  return {
    job_id: readJobId(field(o, 'job_id'), 'job_id'),
    lease_expires_at: readTime(field(o, 'lease_expires_at'), 'lease_expires_at'),
  }
}

/** Why a job failed on the host: a snake_case code and one printable line. */
export interface JobFailure {
  error: { code: string; message: string }
}

const JOB_FAILURE_MESSAGE_MAX = 500

export function readJobFailure(value: unknown, path = 'result'): JobFailure {
  const error = readObject(field(readObject(value, path), 'error'), `${path}.error`)
  return {
    error: {
      code: readString(field(error, 'code'), `${path}.error.code`, {
        max: 64,
        pattern: ERROR_CODE,
        expected: 'a snake_case code',
      }),
      message: printableText(
        readString(field(error, 'message'), `${path}.error.message`, { min: 0, max: 4 * JOB_FAILURE_MESSAGE_MAX }),
        JOB_FAILURE_MESSAGE_MAX,
      ),
    },
  }
}

/**
 * A completion: a succeeded job carries its kind's result (`checks` is the only kind, so
 * a checks result), a failed one a JobFailure. Anything else is refused, not stored.
 */
export type JobCompleteRequest =
  | { lease_token: string; status: 'succeeded'; result: ChecksJobResult }
  | { lease_token: string; status: 'failed'; result: JobFailure }

export function readJobCompleteRequest(value: unknown): JobCompleteRequest {
  const o = readObject(value, 'body')
  const lease_token = readLeaseToken(field(o, 'lease_token'), 'lease_token')
  const status = readEnum(field(o, 'status'), 'status', ['succeeded', 'failed'] as const)
  return status === 'succeeded'
    ? { lease_token, status, result: readChecksJobResult(field(o, 'result')) }
    : { lease_token, status, result: readJobFailure(field(o, 'result')) }
}

export interface JobCompleteResponse {
  job_id: string
  status: 'succeeded' | 'failed'
}

// ---- every listener ----

export interface HealthResponse {
  status: 'ok'
  /** The gateway's PostgreSQL as its last check saw it (a 503 with `state_unavailable` says `down`). */
  database?: 'up' | 'down'
}

/** The gateway's error code, if the body is a refusal (`{"error": {"code", "message"}}`); anything else is undefined, never a throw. */
export function errorCodeOf(value: unknown): string | undefined {
  try {
    const error = readObject(field(readObject(value, 'body'), 'error'), 'error')
    return readString(field(error, 'code'), 'error.code', { max: 64, pattern: ERROR_CODE })
  } catch (error) {
    if (error instanceof WireFormatError) return undefined
    throw error
  }
}
