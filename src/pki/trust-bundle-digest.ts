// One digest of a trust bundle that the gateway and the agent compute the same way: SHA-256 over the
// sorted SHA-256s of its certificates (DER), so PEM line breaks and order do not matter. Node built-ins only: the agent bundle carries it.
import { createHash } from 'node:crypto'

const CERTIFICATE = /-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+?)-----END CERTIFICATE-----/g

export function trustBundleDigest(bundlePem: string): string {
  const fingerprints = [...bundlePem.matchAll(CERTIFICATE)].map((m) =>
    createHash('sha256')
      .update(Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64'))
      .digest('hex'),
  )
  return createHash('sha256')
    .update([...new Set(fingerprints)].sort().join(','))
    .digest('hex')
}
