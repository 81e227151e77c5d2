// The gateway's TLS server certificate: the names and addresses it answers as,
// signed by the CA, EKU serverAuth, on a key of its own.
import { isIP } from 'node:net'

import { authorityKeyIdentifier, type IssuingCa } from './certificate-authority.js'
import { BACKDATE_MS } from './client-certificate.js'
import { certificateFingerprintSha256 } from './fingerprint.js'
import { SIGNING_ALGORITHM } from './keys.js'
import type { Rng } from '../config/rng.js'
import { randomSerial } from './serial.js'
import { x509 } from './x509-provider.js'

const SERVER_CERT_LIFETIME_SECONDS = 825 * 24 * 3600
export const DEFAULT_SERVER_NAMES = ['localhost', '127.0.0.1', '::1']

const DNS_NAME =
  /^(?=.{1,253}$)(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/

/** True for a DNS name or an IPv4/IPv6 address a server certificate may carry. */
export function isValidServerName(name: string): boolean {
  return isIP(name) !== 0 || DNS_NAME.test(name)
}

export async function issueServerCertificate(options: {
  ca: IssuingCa
  publicKey: x509.PublicKeyType
  names: readonly string[]
  now: Date
  lifetimeSeconds?: number
  rng?: Rng
}): Promise<{ certificatePem: string; fingerprintSha256: string; notAfter: Date }> {
  const names = [...new Set(options.names)]
  if (names.length === 0) throw new Error('a server certificate needs at least one name')
  const bad = names.find((n) => !isValidServerName(n))
  if (bad !== undefined) throw new Error(`not a DNS name or IP address: ${JSON.stringify(bad)}`)
  const start = Math.floor(options.now.getTime() / 1000) * 1000
  const notAfter = new Date(start + (options.lifetimeSeconds ?? SERVER_CERT_LIFETIME_SECONDS) * 1000)
  const firstDns = names.find((n) => isIP(n) === 0) ?? names[0]!
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(options.rng),
    subject: [{ CN: [firstDns] }],
    issuer: options.ca.certificate.subjectName,
    notBefore: new Date(start - BACKDATE_MS),
    notAfter,
    publicKey: options.publicKey,
    signingKey: options.ca.signingKey,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      new x509.SubjectAlternativeNameExtension(
        names.map((n) => ({ type: isIP(n) === 0 ? ('dns' as const) : ('ip' as const), value: n })),
        false,
      ),
      await authorityKeyIdentifier(options.ca),
    ],
  })
  const certificatePem = certificate.toString('pem') + '\n'
  return { certificatePem, fingerprintSha256: certificateFingerprintSha256(certificatePem), notAfter }
}

/** The DNS names and IP addresses a server certificate answers as. */
export function serverCertificateNames(certificatePem: string): string[] {
  const certificate = new x509.X509Certificate(certificatePem)
  const san = certificate.getExtension('2.5.29.17')
  if (!san) return []
  return new x509.SubjectAlternativeNameExtension(san.rawData).names.toJSON().map((n) => n.value)
}
