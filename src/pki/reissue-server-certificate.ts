// `fleetkit ca server-cert`: re-issue the gateway's server certificate with other names, on the
// same key or (--new-key) a new one, by the CA that signed the current one; the gateway's 2 s reload
// picks it up. A new key is the cure for a leaked server.key: agents trust the CA and the names, not
// the key, so none is cut off.
import { FleetkitError } from '../checks/fleetkit-error.js'
import { loadIssuingCa } from './certificate-authority.js'
import { resignServerCertificate, signedBy } from './ca-rotation.js'
import { generateP256KeyPair, privateKeyToPem } from './keys.js'
import { buildPkiSet } from './pki-set.js'
import { withPkiLock } from './pki-lock.js'
import { PKI_FILE_NAMES, readArchivedCa, readPkiDirectory, removeStaleTempFiles, writePkiFiles } from './pki-files.js'
import { isValidServerName, serverCertificateNames } from './server-certificate.js'

export interface ServerCertResult {
  /** @minLength 1 */
  pkiDir: string
  /** @minItems 1 */
  serverNames: string[]
  previousServerNames: string[]
  /** @format date-time */
  serverNotAfter: string
  /** @pattern ^[0-9a-f]{64}$ */
  serverFingerprintSha256: string
  /**
   * SHA-256 of the CA that signed it: the current CA, or during a rotation the CA being rotated out.
   * @pattern ^[0-9a-f]{64}$
   */
  issuerCaSha256: string
  /** Whether server.key was replaced (--new-key). */
  newKey: boolean
  removedTempFiles: string[]
}

export async function reissueServerCertificate(options: {
  pkiDir: string
  /** The names to serve; empty keeps the current ones (only with newKey). */
  serverNames: readonly string[]
  newKey?: boolean
  now: Date
}): Promise<ServerCertResult> {
  const { pkiDir, now } = options
  const newKey = options.newKey ?? false
  const names = [...new Set(options.serverNames)]
  if (names.length === 0 && !newKey)
    throw new FleetkitError('USAGE_INVALID', 'name at least one --server-name, or give --new-key', {
      actions: ['fleetkit ca server-cert --help'],
    })
  const bad = names.find((name) => !isValidServerName(name))
  if (bad !== undefined) {
    throw new FleetkitError(
      'USAGE_INVALID',
      `--server-name ${JSON.stringify(bad)} is neither a DNS name nor an IP address`,
      { actions: ['fleetkit ca server-cert --help'] },
    )
  }
  return withPkiLock(pkiDir, () => reissueLocked(pkiDir, names, newKey, now))
}

async function reissueLocked(pkiDir: string, names: string[], newKey: boolean, now: Date): Promise<ServerCertResult> {
  const removedTempFiles = await removeStaleTempFiles(pkiDir)
  const files = await readPkiDirectory(pkiDir)
  const set = await buildPkiSet(pkiDir, files, now)
  // During a rotation agents that have not renewed trust only the old CA: keep the signer the server certificate has.
  let signer = { certificatePem: files.caCertificate, keyPem: files.caKey }
  if (!signedBy(files.serverCertificate, files.caCertificate)) {
    const archived = await readArchivedCa(pkiDir)
    if (!archived || !signedBy(files.serverCertificate, archived.caCertificate)) {
      throw new FleetkitError('PKI_INVALID', `${pkiDir}/server.pem is signed neither by ca.pem nor by an archived CA`, {
        actions: ['fleetkit ca rotate --status', 'restore the PKI directory from backup'],
        data: { dir: pkiDir, problem: 'server.pem issuer unknown' },
      })
    }
    signer = { certificatePem: archived.caCertificate, keyPem: archived.caKey }
  }
  const ca = await loadIssuingCa(signer.certificatePem, signer.keyPem)
  const keyPem = newKey ? await privateKeyToPem((await generateP256KeyPair()).privateKey) : files.serverKey
  const issued = await resignServerCertificate({
    ca,
    serverCertificatePem: files.serverCertificate,
    serverKeyPem: keyPem,
    ...(names.length === 0 ? {} : { names }),
    now,
  })
  // Key first, then certificate: a reload between the two renames sees a mismatched pair, which it
  // refuses (pki-set.ts), keeping the running set until the next reload reads both.
  await writePkiFiles(pkiDir, [
    ...(newKey ? [{ name: PKI_FILE_NAMES.serverKey, content: keyPem, mode: 0o600 }] : []),
    { name: PKI_FILE_NAMES.serverCertificate, content: issued.certificatePem, mode: 0o644 },
  ])
  return {
    pkiDir,
    serverNames: issued.names,
    previousServerNames: serverCertificateNames(set.server.certificatePem),
    serverNotAfter: issued.notAfter.toISOString(),
    serverFingerprintSha256: issued.fingerprintSha256,
    issuerCaSha256: ca.fingerprintSha256,
    newKey,
    removedTempFiles,
  }
}
