// The PKI set the gateway serves with: CA (issuer), trust bundle and server certificate,
// loaded whole and self-tested, so a half-written or mismatched set is never used.
import { createPrivateKey, X509Certificate } from 'node:crypto'
import { join } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { loadIssuingCa, selfTestIssuingCa, type IssuingCa } from './certificate-authority.js'
import { sha256Hex } from './fingerprint.js'
import { certificatePems } from './pem.js'
import { readPkiDirectory, type PkiFileText } from './pki-files.js'
import { serverCertificateNames } from './server-certificate.js'
import { bundleFingerprints } from './trust-bundle.js'

export interface PkiSet {
  dir: string
  /** SHA-256 over every file's text: a changed value means a changed set (hot reload). */
  version: string
  ca: IssuingCa
  bundlePem: string
  bundleFingerprints: string[]
  server: { certificatePem: string; privateKeyPem: string; names: string[]; notAfter: Date }
}

export async function loadPkiSet(dir: string, now: Date, uid?: number): Promise<PkiSet> {
  const files = await readPkiDirectory(dir, uid)
  return buildPkiSet(dir, files, now)
}

/** Check and assemble a set from file texts already read. Throws PKI_INVALID naming the first problem. */
export async function buildPkiSet(dir: string, files: PkiFileText, now: Date): Promise<PkiSet> {
  const invalid = (problem: string, cause?: unknown) =>
    new FleetkitError('PKI_INVALID', `the PKI set in ${dir} is not usable: ${problem}`, {
      actions: [
        `openssl x509 -noout -subject -enddate -in ${join(dir, 'ca.pem')}`,
        'restore the PKI directory from backup, or re-create it with fleetkit ca init in an empty directory',
      ],
      data: { dir, problem },
      cause,
    })
  let ca: IssuingCa
  try {
    ca = await loadIssuingCa(files.caCertificate, files.caKey)
  } catch (error) {
    throw invalid('ca.pem or ca.key does not parse as a P-256 certificate and key', error)
  }
  if (!(await selfTestIssuingCa(ca, now))) throw invalid('ca.key does not belong to ca.pem')
  if (now.getTime() > ca.certificate.notAfter.getTime())
    throw invalid(`the CA expired at ${ca.certificate.notAfter.toISOString()}`)
  const fingerprints = bundleFingerprints(files.bundle)
  if (!fingerprints.includes(ca.fingerprintSha256)) throw invalid('ca-bundle.pem does not contain ca.pem')
  let server: X509Certificate
  try {
    server = new X509Certificate(files.serverCertificate)
    if (!server.checkPrivateKey(createPrivateKey(files.serverKey)))
      throw invalid('server.key does not belong to server.pem')
  } catch (error) {
    if (error instanceof FleetkitError) throw error
    throw invalid('server.pem or server.key does not parse', error)
  }
  const issuers = certificatePems(files.bundle).map((pem) => new X509Certificate(pem))
  if (!issuers.some((issuer) => server.checkIssued(issuer) && server.verify(issuer.publicKey))) {
    throw invalid('server.pem is not signed by a CA in ca-bundle.pem')
  }
  const serverNotAfter = new Date(server.validTo)
  if (now.getTime() > serverNotAfter.getTime()) throw invalid(`server.pem expired at ${serverNotAfter.toISOString()}`)
  return {
    dir,
    version: sha256Hex(
      [files.caCertificate, files.caKey, files.bundle, files.serverCertificate, files.serverKey].join('\0'),
    ),
    ca,
    bundlePem: files.bundle,
    bundleFingerprints: fingerprints,
    server: {
      certificatePem: files.serverCertificate,
      privateKeyPem: files.serverKey,
      names: serverCertificateNames(files.serverCertificate),
      notAfter: serverNotAfter,
    },
  }
}
