// Issuing a node's client certificate: CN and SAN DNS = node id, EKU clientAuth only,
// KeyUsage digitalSignature (critical), not a CA, random serial, notBefore backdated 60 s.
import { authorityKeyIdentifier, type IssuingCa } from './certificate-authority.js'
import { certificateFingerprintSha256 } from './fingerprint.js'
import { SIGNING_ALGORITHM } from './keys.js'
import type { Rng } from '../config/rng.js'
import { randomSerial } from './serial.js'
import { x509 } from './x509-provider.js'

/** Clock skew a fresh certificate tolerates: notBefore lies this far in the past. */
export const BACKDATE_MS = 60_000

export interface IssuedCertificate {
  certificatePem: string
  fingerprintSha256: string
  serial: string
  notBefore: Date
  notAfter: Date
  issuerCaSha256: string
}

export async function issueClientCertificate(options: {
  ca: IssuingCa
  subjectPublicKey: x509.PublicKey
  nodeId: string
  now: Date
  lifetimeSeconds: number
  rng?: Rng
}): Promise<IssuedCertificate> {
  const { ca, nodeId, now } = options
  const serial = randomSerial(options.rng)
  // Whole seconds: certificates carry second precision, and the stored row must equal the certificate.
  const start = Math.floor(now.getTime() / 1000) * 1000
  const notBefore = new Date(start - BACKDATE_MS)
  const notAfter = new Date(start + options.lifetimeSeconds * 1000)
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serial,
    subject: [{ CN: [nodeId] }],
    issuer: ca.certificate.subjectName,
    notBefore,
    notAfter,
    publicKey: options.subjectPublicKey,
    signingKey: ca.signingKey,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth], false),
      new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: nodeId }], false),
      await authorityKeyIdentifier(ca),
    ],
  })
  const certificatePem = certificate.toString('pem') + '\n'
  return {
    certificatePem,
    fingerprintSha256: certificateFingerprintSha256(certificatePem),
    serial,
    notBefore,
    notAfter,
    issuerCaSha256: ca.fingerprintSha256,
  }
}
