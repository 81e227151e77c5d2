// Recovery of a node whose certificate expired (spec 05 "A node that was away can come back"), on
// the enrollment listener: a challenge, then the challenge signed with the key of the expired certificate.
import { readNodeId } from './enrollment.js'
import { field, readCertificatePem, readInteger, readObject, readString, readTime } from './wire-format.js'

export const RECOVER_CHALLENGE_PATH = '/v1/recover/challenge'
export const RECOVER_PATH = '/v1/recover'

export interface RecoverChallengeRequest {
  node_id: string
}

export interface RecoverChallengeResponse {
  /** Opaque to the agent: it signs these exact bytes (UTF-8) with its key. Single use, short-lived. */
  challenge: string
  expires_at: string
}

export interface RecoverRequest {
  node_id: string
  challenge: string
  /** The node's latest certificate (expired), whose key signed the challenge. */
  certificate_pem: string
  /**
   * ECDSA-SHA256 signature (DER, base64) of src/pki/recovery-signature.ts recoverySignedBytes: with
   * signature_version 2 the challenge and the CSR's digest, without it (agents before 2) the challenge alone.
   */
  signature: string
  signature_version?: 2
  /** A CSR for the node's new key (checked by src/pki/csr.ts). */
  csr_pem: string
}

/** Same shape as the enrollment response: a certificate and the trust bundle. */
export interface RecoverResponse {
  certificate_pem: string
  ca_pem: string
  not_after: string
}

const CHALLENGE = /^[A-Za-z0-9._-]{1,600}$/
const BASE64 = /^[A-Za-z0-9+/]{1,400}={0,2}$/

export function readRecoverChallengeRequest(value: unknown): RecoverChallengeRequest {
  return { node_id: readNodeId(field(readObject(value, 'body'), 'node_id'), 'node_id') }
}

export function readRecoverChallengeResponse(value: unknown): RecoverChallengeResponse {
  const o = readObject(value, 'body')
  return {
    challenge: readString(field(o, 'challenge'), 'challenge', {
      max: 600,
      pattern: CHALLENGE,
      expected: 'an opaque challenge',
    }),
    expires_at: readTime(field(o, 'expires_at'), 'expires_at'),
  }
}

export function readRecoverRequest(value: unknown): RecoverRequest {
  const o = readObject(value, 'body')
  return {
    node_id: readNodeId(field(o, 'node_id'), 'node_id'),
    challenge: readString(field(o, 'challenge'), 'challenge', {
      max: 600,
      pattern: CHALLENGE,
      expected: 'an opaque challenge',
    }),
    certificate_pem: readCertificatePem(field(o, 'certificate_pem'), 'certificate_pem'),
    signature: readString(field(o, 'signature'), 'signature', { max: 404, pattern: BASE64, expected: 'base64' }),
    csr_pem: readString(field(o, 'csr_pem'), 'csr_pem', { min: 0, max: 64 * 1024 }),
    ...(field(o, 'signature_version') === undefined
      ? {}
      : { signature_version: readInteger(field(o, 'signature_version'), 'signature_version', 2, 2) as 2 }),
  }
}

export function readRecoverResponse(value: unknown): RecoverResponse {
  const o = readObject(value, 'body')
  return {
    certificate_pem: readCertificatePem(field(o, 'certificate_pem'), 'certificate_pem'),
    ca_pem: readCertificatePem(field(o, 'ca_pem'), 'ca_pem'),
    not_after: readTime(field(o, 'not_after'), 'not_after'),
  }
}
