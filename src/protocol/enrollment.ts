// POST /v1/enroll on the enrollment listener (server-auth TLS): the node's single-use
// secret and CSR in, its first certificate and the gateway's trust bundle out.
import { WireFormatError, field, readCertificatePem, readObject, readString, readTime } from './wire-format.js'

export const ENROLL_PATH = '/v1/enroll'

export interface EnrollRequest {
  node_id: string
  /** Single-use; only its SHA-256 is stored. Never logged, never echoed. */
  enrollment_secret: string
  /** Checked by src/pki/csr.ts (ENROLLMENT_CSR_INVALID), not here: a bad CSR must not use the secret up. */
  csr_pem: string
}

export interface EnrollResponse {
  certificate_pem: string
  /** The trust bundle the agent stages beside its pinned CA. */
  ca_pem: string
  not_after: string
}

const ENROLLMENT_SECRET_MAX = 512
const CSR_PEM_MAX = 64 * 1024

/** fleet.yaml's node id (`nodeId` of src/definition/grammar.ts, a peer layer; a unit test keeps them equal). */
export const NODE_ID = /^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * A node id a host claims (enrollment, recovery): fleet.yaml's node id or a UUID, what the agent itself accepts
 * (isNodeIdOrUuid). A claim outside is refused before it reaches a query, a log line or the event of a refused
 * enrollment, which `fleetkit events` prints on a terminal.
 */
export function readNodeId(value: unknown, path: string): string {
  if (typeof value !== 'string' || !(NODE_ID.test(value) || UUID.test(value)))
    throw new WireFormatError(path, 'must be a node id (fleet.yaml\'s: lowercase letters, digits and "-") or a UUID')
  return value
}

export function readEnrollRequest(value: unknown): EnrollRequest {
  const o = readObject(value, 'body')
  return {
    node_id: readNodeId(field(o, 'node_id'), 'node_id'),
    enrollment_secret: readString(field(o, 'enrollment_secret'), 'enrollment_secret', { max: ENROLLMENT_SECRET_MAX }),
    csr_pem: readString(field(o, 'csr_pem'), 'csr_pem', { min: 0, max: CSR_PEM_MAX }),
  }
}

export function readEnrollResponse(value: unknown): EnrollResponse {
  const o = readObject(value, 'body')
  return {
    certificate_pem: readCertificatePem(field(o, 'certificate_pem'), 'certificate_pem'),
    ca_pem: readCertificatePem(field(o, 'ca_pem'), 'ca_pem'),
    not_after: readTime(field(o, 'not_after'), 'not_after'),
  }
}
