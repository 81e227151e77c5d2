// `fleetkit ca operator-cert NAME`: a client certificate for the gateway's operator API, signed
// by the fleet CA, recorded (fingerprint) so the API can tell it from an agent's; key stays local.
import { basename, join } from 'node:path'

import type { StatePool } from '../../store/transaction.js'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Clock } from '../../config/clock.js'
import { assertSecretOutsideGit, type GitRunner } from '../../fs/output-in-git.js'
import { removeDurably } from '../../fs/atomic-file.js'
import { writePrivateFiles } from '../../fs/private-file.js'
import { issueClientCertificate } from '../../pki/client-certificate.js'
import { generateP256KeyPair, privateKeyToPem } from '../../pki/keys.js'
import { loadPkiSet } from '../../pki/pki-set.js'
import { crypto, x509 } from '../../pki/x509-provider.js'
import { lockIssuance } from '../../store/pki/issuance-guard.js'
import { withTransaction } from '../../store/database.js'
import { appendEvent } from '../../store/events.js'
import { insertOperatorCertificate } from '../../store/pki/operator-certificates.js'
import { makeDirectories } from '../../fs/make-directories.js'

const OPERATOR_NAME = /^[a-z0-9][a-z0-9.-]{0,62}$/

export interface OperatorCertResult {
  /** @pattern ^[a-z0-9][a-z0-9.-]{0,62}$ */
  name: string
  /** @pattern ^[0-9a-f]{1,40}$ */
  serial: string
  /** @pattern ^[0-9a-f]{64}$ */
  fingerprintSha256: string
  /** @format date-time */
  notAfter: string
  certificateFile: string
  keyFile: string
  caBundleFile: string
}

/** USAGE_INVALID unless NAME is an operator name (what `ca operator-cert` accepts). */
export function checkOperatorName(name: string, example: string): void {
  if (OPERATOR_NAME.test(name)) return
  throw new FleetkitError(
    'USAGE_INVALID',
    `operator name ${JSON.stringify(name.slice(0, 64))} must be a lowercase DNS-style label (a-z, 0-9, . and -, up to 63)`,
    { actions: [example] },
  )
}

export async function issueOperatorCertificate(options: {
  pool: StatePool
  pkiDir: string
  outDir: string
  name: string
  lifetimeDays: number
  actor: string
  clock: Clock
  /**
   * Set when the operator chose outDir (--out): the key file is refused inside a Git work tree that
   * does not ignore it (SECRET_OUTPUT_IN_GIT), unless force. The default under the state directory is not checked.
   */
  chosenOutDir?: { force: boolean; git?: GitRunner }
}): Promise<OperatorCertResult> {
  const { name } = options
  checkOperatorName(name, 'fleetkit ca operator-cert alice')
  const keyFile = join(options.outDir, `${name}.key`)
  if (options.chosenOutDir) {
    const retry = `fleetkit ca operator-cert ${name}`
    await assertSecretOutsideGit({
      path: keyFile,
      what: `the private key of operator ${name}`,
      outside: `${retry}   (without --out: written 0600 under <state dir>/operators/)`,
      retry: `${retry} --out ${options.outDir}`,
      force: options.chosenOutDir.force,
      ...(options.chosenOutDir.git ? { git: options.chosenOutDir.git } : {}),
    })
  }
  const now = options.clock.now()
  const pki = await loadPkiSet(options.pkiDir, now)
  const keys = await generateP256KeyPair()
  const certificateFile = join(options.outDir, `${name}.pem`)
  const caBundleFile = join(options.outDir, 'gateway-ca.pem')
  let written = false
  const issued = await withTransaction(options.pool, async (client) => {
    // Shared issuance lock, and never from a CA a rotation retired (the files were read before the lock).
    await lockIssuance(client, pki.ca)
    const subjectPublicKey = await x509.PublicKey.create(keys.publicKey, crypto)
    const cert = await issueClientCertificate({
      ca: pki.ca,
      subjectPublicKey,
      nodeId: `operator-${name}`,
      now,
      lifetimeSeconds: options.lifetimeDays * 86400,
    })
    await insertOperatorCertificate(client, {
      name,
      fingerprintSha256: cert.fingerprintSha256,
      serial: cert.serial,
      notBefore: cert.notBefore,
      notAfter: cert.notAfter,
    })
    await appendEvent(client, {
      kind: 'operator_certificate_issued',
      data: { name, serial: cert.serial, not_after: cert.notAfter.toISOString(), actor: options.actor },
    })
    // Written before the commit: a failed write (full disk, unwritable directory) rolls the row back,
    // so no certificate is recorded that nobody holds. All three or none (temp files renamed once
    // all are written): never a key beside an empty certificate.
    await makeDirectories(options.outDir, 0o700)
    await writePrivateFiles(options.outDir, [
      { name: basename(keyFile), content: await privateKeyToPem(keys.privateKey), mode: 0o600 },
      { name: basename(certificateFile), content: cert.certificatePem, mode: 0o644 },
      { name: basename(caBundleFile), content: pki.bundlePem, mode: 0o644 },
    ])
    written = true
    return cert
  }).catch(async (error: unknown) => {
    // The commit failed after the files were written: the row is gone, so are they.
    if (written) for (const file of [keyFile, certificateFile, caBundleFile]) await removeDurably(file).catch(() => {})
    throw error
  })
  return {
    name,
    serial: issued.serial,
    fingerprintSha256: issued.fingerprintSha256,
    notAfter: issued.notAfter.toISOString(),
    certificateFile,
    keyFile,
    caBundleFile,
  }
}
