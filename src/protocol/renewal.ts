// The agent listener's renewal and identity routes: a CSR for a new certificate, and what the gateway
// knows of the calling node's identity (src/protocol/agent-routes.ts holds the paths and the other routes).
import { HEX_SHA256, readNodeStatus } from './agent-routes.js'
import { field, readCertificatePem, readObject, readString, readTime } from './wire-format.js'

export interface RenewRequest {
  /** Checked by src/pki/csr.ts (RENEWAL_CSR_INVALID). */
  csr_pem: string
}

export function readRenewRequest(value: unknown): RenewRequest {
  return { csr_pem: readString(field(readObject(value, 'body'), 'csr_pem'), 'csr_pem', { min: 0, max: 64 * 1024 }) }
}

export interface RenewResponse {
  certificate_pem: string
  /** What the gateway trusts now (old and new CA during a rotation). */
  ca_bundle_pem: string
  not_after: string
}

export function readRenewResponse(value: unknown): RenewResponse {
  const o = readObject(value, 'body')
  return {
    certificate_pem: readCertificatePem(field(o, 'certificate_pem'), 'certificate_pem'),
    ca_bundle_pem: readCertificatePem(field(o, 'ca_bundle_pem'), 'ca_bundle_pem'),
    not_after: readTime(field(o, 'not_after'), 'not_after'),
  }
}

/** 409 renewal_not_due. */
export interface RenewalNotDueBody {
  renewal_due_at: string
}

export interface IdentityResponse {
  node_id: string
  status: string
  certificate: {
    serial: string
    not_before: string
    not_after: string
    fingerprint_sha256: string
    issuer_ca_sha256: string
  }
  /** The trust bundle the gateway serves with now (handed over mTLS). Absent from older gateways. */
  ca_bundle_pem?: string
}

export function readIdentityResponse(value: unknown): IdentityResponse {
  const o = readObject(value, 'body')
  const c = readObject(field(o, 'certificate'), 'certificate')
  return {
    node_id: readString(field(o, 'node_id'), 'node_id', { max: 253 }),
    status: readNodeStatus(field(o, 'status'), 'status'),
    certificate: {
      serial: readString(field(c, 'serial'), 'certificate.serial', {
        max: 128,
        pattern: /^[0-9a-f]+$/i,
        expected: 'a hex serial',
      }),
      not_before: readTime(field(c, 'not_before'), 'certificate.not_before'),
      not_after: readTime(field(c, 'not_after'), 'certificate.not_after'),
      fingerprint_sha256: readString(field(c, 'fingerprint_sha256'), 'certificate.fingerprint_sha256', {
        max: 64,
        pattern: HEX_SHA256,
        expected: 'a SHA-256 in hex',
      }),
      issuer_ca_sha256: readString(field(c, 'issuer_ca_sha256'), 'certificate.issuer_ca_sha256', {
        max: 64,
        pattern: HEX_SHA256,
        expected: 'a SHA-256 in hex',
      }),
    },
    ...(field(o, 'ca_bundle_pem') === undefined
      ? {}
      : { ca_bundle_pem: readCertificatePem(field(o, 'ca_bundle_pem'), 'ca_bundle_pem') }),
  }
}
