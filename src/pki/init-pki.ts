// `fleetkit ca init`: a new CA, its trust bundle and the gateway's server certificate,
// written into an empty PKI directory. An existing CA is never overwritten.
import { join } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { assertSecretOutsideGit, type GitRunner } from '../fs/output-in-git.js'
import { createCertificateAuthority, loadIssuingCa } from './certificate-authority.js'
import { generateP256KeyPair, privateKeyToPem } from './keys.js'
import {
  assertNoKeyWithoutCertificate,
  existingCaFiles,
  PKI_FILE_NAMES,
  removeStaleTempFiles,
  writePkiFiles,
} from './pki-files.js'
import { withPkiLock } from './pki-lock.js'
import { DEFAULT_SERVER_NAMES, isValidServerName, issueServerCertificate } from './server-certificate.js'
import { buildTrustBundle } from './trust-bundle.js'

export interface InitPkiResult {
  /** @minLength 1 */
  pkiDir: string
  /** @pattern ^[0-9a-f]{64}$ */
  caFingerprintSha256: string
  /** @format date-time */
  caNotAfter: string
  /** @minItems 1 */
  serverNames: string[]
  /** @format date-time */
  serverNotAfter: string
  files: string[]
}

export async function initPki(options: {
  pkiDir: string
  serverNames?: readonly string[]
  now: Date
  /** --force: write the CA key into a Git work tree that does not ignore it. */
  force?: boolean
  git?: GitRunner
}): Promise<InitPkiResult> {
  const { pkiDir, now } = options
  const serverNames =
    options.serverNames && options.serverNames.length > 0 ? [...new Set(options.serverNames)] : DEFAULT_SERVER_NAMES
  const bad = serverNames.find((name) => !isValidServerName(name))
  if (bad !== undefined) {
    throw new FleetkitError(
      'USAGE_INVALID',
      `--server-name ${JSON.stringify(bad)} is neither a DNS name nor an IP address`,
      { actions: ['fleetkit ca init --help'] },
    )
  }
  // Before the lock, which creates the directory: a CA key inside a repository is refused with nothing written.
  await assertSecretOutsideGit({
    path: join(pkiDir, PKI_FILE_NAMES.caKey),
    what: 'the CA private key (whoever holds it can stand in for the gateway to every agent)',
    outside: 'fleetkit ca init   (without --pki-dir: <state dir>/pki, outside any repository)',
    retry: `fleetkit ca init --pki-dir ${pkiDir}`,
    force: options.force ?? false,
    ...(options.git ? { git: options.git } : {}),
  })
  return withPkiLock(pkiDir, () => initLocked(pkiDir, serverNames, now), { create: true })
}

async function initLocked(pkiDir: string, serverNames: string[], now: Date): Promise<InitPkiResult> {
  // A killed earlier run's temp files may hold a private key; its half-written set gets the one advice.
  await removeStaleTempFiles(pkiDir)
  await assertNoKeyWithoutCertificate(pkiDir)
  const existing = await existingCaFiles(pkiDir)
  if (existing.length > 0) {
    throw new FleetkitError(
      'CA_EXISTS',
      `${pkiDir} already holds a CA (${existing.join(', ')}); refusing to overwrite it`,
      {
        actions: [
          `openssl x509 -noout -subject -fingerprint -sha256 -in ${join(pkiDir, PKI_FILE_NAMES.caCertificate)}`,
          'point FLEETKIT_PKI_DIR at an empty directory for a new CA',
        ],
        data: { pkiDir, existing },
      },
    )
  }
  const created = await createCertificateAuthority({ now })
  const ca = await loadIssuingCa(created.certificatePem, created.privateKeyPem)
  const serverKeys = await generateP256KeyPair()
  const server = await issueServerCertificate({ ca, publicKey: serverKeys.publicKey, names: serverNames, now })
  // ca.pem is renamed into place last: its presence is what "a CA exists" means.
  const files = [
    { name: PKI_FILE_NAMES.serverKey, content: await privateKeyToPem(serverKeys.privateKey), mode: 0o600 },
    { name: PKI_FILE_NAMES.serverCertificate, content: server.certificatePem, mode: 0o644 },
    { name: PKI_FILE_NAMES.bundle, content: buildTrustBundle([created.certificatePem]), mode: 0o644 },
    { name: PKI_FILE_NAMES.caKey, content: created.privateKeyPem, mode: 0o600 },
    { name: PKI_FILE_NAMES.caCertificate, content: created.certificatePem, mode: 0o644 },
  ]
  await writePkiFiles(pkiDir, files)
  return {
    pkiDir,
    caFingerprintSha256: created.fingerprintSha256,
    caNotAfter: ca.certificate.notAfter.toISOString(),
    serverNames,
    serverNotAfter: server.notAfter.toISOString(),
    files: files.map((f) => f.name),
  }
}
