// Creating a P-256 certificate authority, and the in-memory issuer the gateway
// signs with (certificate, signing key and its SHA-256 fingerprint, loaded together).
import { certificateFingerprintSha256 } from './fingerprint.js'
import { generateP256KeyPair, importSigningKey, privateKeyToPem, SIGNING_ALGORITHM } from './keys.js'
import type { Rng } from '../config/rng.js'
import { randomSerial } from './serial.js'
import { x509 } from './x509-provider.js'

const CA_LIFETIME_SECONDS = 10 * 365 * 24 * 3600

export interface NewCertificateAuthority {
  certificatePem: string
  privateKeyPem: string
  fingerprintSha256: string
}

export interface IssuingCa {
  certificatePem: string
  certificate: x509.X509Certificate
  signingKey: CryptoKey
  /** The key's PEM text, kept so issuance workers (src/gateway/issuance/issuance-pool.ts) can load the same CA once each. */
  privateKeyPem: string
  fingerprintSha256: string
}

export async function createCertificateAuthority(options: {
  now: Date
  commonName?: string
  lifetimeSeconds?: number
  rng?: Rng
}): Promise<NewCertificateAuthority> {
  const keys = await generateP256KeyPair()
  const notBefore = new Date(options.now.getTime() - 60_000)
  const notAfter = new Date(options.now.getTime() + (options.lifetimeSeconds ?? CA_LIFETIME_SECONDS) * 1000)
  const name = `CN=${options.commonName ?? `fleetkit CA ${options.now.toISOString().slice(0, 10)}`}`
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(options.rng),
    name,
    notBefore,
    notAfter,
    keys,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  })
  const certificatePem = certificate.toString('pem') + '\n'
  return {
    certificatePem,
    privateKeyPem: await privateKeyToPem(keys.privateKey),
    fingerprintSha256: certificateFingerprintSha256(certificatePem),
  }
}

/** Parse a CA certificate and key (PEM text, already read) into an issuer. Throws on a malformed input. */
export async function loadIssuingCa(certificatePem: string, privateKeyPem: string): Promise<IssuingCa> {
  const certificate = new x509.X509Certificate(certificatePem)
  const signingKey = await importSigningKey(privateKeyPem)
  return {
    certificatePem,
    certificate,
    signingKey,
    privateKeyPem,
    fingerprintSha256: certificateFingerprintSha256(certificatePem),
  }
}

/** Each CA's authority key identifier, computed once (a SHA-1 over its key per issuance was measurable). */
const authorityKeyIds = new WeakMap<IssuingCa, Promise<x509.AuthorityKeyIdentifierExtension>>()

/** The extensions every certificate a CA issues carries to name its issuer. */
export function authorityKeyIdentifier(ca: IssuingCa): Promise<x509.AuthorityKeyIdentifierExtension> {
  let ext = authorityKeyIds.get(ca)
  if (!ext) {
    ext = x509.AuthorityKeyIdentifierExtension.create(ca.certificate.publicKey)
    authorityKeyIds.set(ca, ext)
  }
  return ext
}

/**
 * Self-test of a CA: its key signs a throwaway certificate that its certificate
 * verifies, so a certificate and key that do not belong together are refused.
 */
export async function selfTestIssuingCa(ca: IssuingCa, now: Date): Promise<boolean> {
  const keys = await generateP256KeyPair()
  const probe = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: 'CN=fleetkit self-test',
    issuer: ca.certificate.subjectName,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + 60_000),
    publicKey: keys.publicKey,
    signingKey: ca.signingKey,
    signingAlgorithm: SIGNING_ALGORITHM,
  })
  return probe.verify({ publicKey: ca.certificate.publicKey, signatureOnly: true })
}
