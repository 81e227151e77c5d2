// Trust bundles: the CA certificates a party accepts (the current CA first, then a
// CA being rotated out), as one PEM text, de-duplicated by fingerprint.
import { certificateFingerprintSha256 } from './fingerprint.js'
import { certificatePems } from './pem.js'

export function buildTrustBundle(caCertificatePems: readonly string[]): string {
  const seen = new Set<string>()
  const out: string[] = []
  for (const pem of caCertificatePems.flatMap((text) => certificatePems(text))) {
    const fingerprint = certificateFingerprintSha256(pem)
    if (seen.has(fingerprint)) continue
    seen.add(fingerprint)
    out.push(pem)
  }
  return out.join('')
}

export function bundleFingerprints(bundlePem: string): string[] {
  return certificatePems(bundlePem).map((pem) => certificateFingerprintSha256(pem))
}
