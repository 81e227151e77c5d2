// The files of each CA rotation phase (spec 05 "CA rotation"), as pure functions over keys and
// certificates: begin archives the CA and trusts old and new; completion trusts the new CA only.
import { X509Certificate } from 'node:crypto'

import { createCertificateAuthority, loadIssuingCa, type IssuingCa } from './certificate-authority.js'
import { certificateFingerprintSha256 } from './fingerprint.js'
import { publicKeyDerOf } from './keys.js'
import { ARCHIVE_FILE_NAMES, PKI_FILE_NAMES, type ArchivedCa, type NewPkiFile, type PkiFileText } from './pki-files.js'
import { issueServerCertificate, serverCertificateNames } from './server-certificate.js'
import { buildTrustBundle } from './trust-bundle.js'

export interface BeginPlan {
  newCaSha256: string
  oldCaSha256: string
  /** In rename order: the archive first, then the two-CA bundle, then the new key, the new certificate last. */
  files: NewPkiFile[]
}

/** A new P-256 CA and the files that archive the current one and trust both. */
export async function planRotationBegin(current: PkiFileText, now: Date): Promise<BeginPlan> {
  const created = await createCertificateAuthority({ now })
  return {
    newCaSha256: created.fingerprintSha256,
    oldCaSha256: certificateFingerprintSha256(current.caCertificate),
    files: [
      { name: ARCHIVE_FILE_NAMES.caCertificate, content: current.caCertificate, mode: 0o644 },
      { name: ARCHIVE_FILE_NAMES.caKey, content: current.caKey, mode: 0o600 },
      { name: ARCHIVE_FILE_NAMES.bundle, content: current.bundle, mode: 0o644 },
      {
        name: PKI_FILE_NAMES.bundle,
        content: buildTrustBundle([created.certificatePem, current.caCertificate]),
        mode: 0o644,
      },
      { name: PKI_FILE_NAMES.caKey, content: created.privateKeyPem, mode: 0o600 },
      { name: PKI_FILE_NAMES.caCertificate, content: created.certificatePem, mode: 0o644 },
    ],
  }
}

/** The files that put the archived CA back (abort): bundle first, certificate last, as at begin. */
export function planRotationAbort(archived: ArchivedCa): NewPkiFile[] {
  return [
    { name: PKI_FILE_NAMES.bundle, content: archived.bundle, mode: 0o644 },
    { name: PKI_FILE_NAMES.caKey, content: archived.caKey, mode: 0o600 },
    { name: PKI_FILE_NAMES.caCertificate, content: archived.caCertificate, mode: 0o644 },
  ]
}

/** Whether `certificatePem` was signed by `issuerPem` (name and signature). */
export function signedBy(certificatePem: string, issuerPem: string): boolean {
  const certificate = new X509Certificate(certificatePem)
  const issuer = new X509Certificate(issuerPem)
  return certificate.checkIssued(issuer) && certificate.verify(issuer.publicKey)
}

/** Re-sign a server certificate for the key given (the same, or a new one), `names` (default: the same names), by `ca`. */
export async function resignServerCertificate(options: {
  ca: IssuingCa
  serverCertificatePem: string
  serverKeyPem: string
  names?: readonly string[]
  now: Date
}): Promise<{ certificatePem: string; fingerprintSha256: string; notAfter: Date; names: string[] }> {
  const names = options.names ? [...new Set(options.names)] : serverCertificateNames(options.serverCertificatePem)
  const issued = await issueServerCertificate({
    ca: options.ca,
    publicKey: Uint8Array.from(publicKeyDerOf(options.serverKeyPem)).buffer,
    names,
    now: options.now,
  })
  return { ...issued, names }
}

/**
 * What completion leaves: a trust bundle of the new CA only and the server certificate re-signed
 * by it (same names and key). Nothing when the directory already is in that state.
 */
export async function planRotationCompletion(current: PkiFileText, now: Date): Promise<NewPkiFile[]> {
  const files: NewPkiFile[] = []
  const newCa = await loadIssuingCa(current.caCertificate, current.caKey)
  if (!signedBy(current.serverCertificate, current.caCertificate)) {
    const server = await resignServerCertificate({
      ca: newCa,
      serverCertificatePem: current.serverCertificate,
      serverKeyPem: current.serverKey,
      now,
    })
    files.push({ name: PKI_FILE_NAMES.serverCertificate, content: server.certificatePem, mode: 0o644 })
  }
  const bundle = buildTrustBundle([current.caCertificate])
  if (bundle !== buildTrustBundle([current.bundle]))
    files.push({ name: PKI_FILE_NAMES.bundle, content: bundle, mode: 0o644 })
  return files
}
