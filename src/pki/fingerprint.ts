// SHA-256 fingerprints of certificates: lowercase hex of the DER, the key by which
// the store finds a presented certificate and records which CA issued it.
import * as crypto from 'node:crypto'

import { pemBlocks } from './pem.js'

/**
 * `crypto.hash`, one call and no Hash object, where this Node.js has it (20.12 and later): on the mTLS
 * listener a fingerprint is taken once per connection right after a handshake, where a createHash object
 * cost about 30 µs against about 12 (measured, issue 40). Looked up, not imported by name: on an older
 * Node.js a named import of it would fail the whole module.
 */
const oneShotHash = (crypto as { hash?: (algorithm: string, data: Uint8Array | string, encoding: 'hex') => string })
  .hash

export function sha256Hex(data: Uint8Array | string): string {
  return oneShotHash ? oneShotHash('sha256', data, 'hex') : crypto.createHash('sha256').update(data).digest('hex')
}

/** Fingerprint of a DER certificate (as TLS hands it over in `getPeerCertificate().raw`). */
export function derFingerprintSha256(der: Uint8Array): string {
  return sha256Hex(der)
}

/**
 * The same fingerprint from an X509Certificate's `fingerprint256` (upper-case hex pairs joined by `:`),
 * which OpenSSL computes natively from the certificate it already holds: on the mTLS listener this
 * replaces copying the DER out (`.raw`) and hashing it in a JavaScript Hash object on every connection.
 */
export function fingerprint256Hex(fingerprint256: string): string {
  return fingerprint256.replaceAll(':', '').toLowerCase()
}

/** Fingerprint of the first certificate in a PEM text. */
export function certificateFingerprintSha256(pem: string): string {
  const block = pemBlocks(pem).find((b) => b.label === 'CERTIFICATE')
  if (!block) throw new Error('no CERTIFICATE block in the PEM text')
  return sha256Hex(block.der)
}
