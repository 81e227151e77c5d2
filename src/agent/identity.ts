// The agent's identity on disk (key, certificate, the gateway CA bundle in the PKI
// directory): staging a new pair crash-safely, and loading it with its validity window.
import { X509Certificate, createPrivateKey } from 'node:crypto'
import { readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { commitStaged, syncDirectory, writeFileAtomic, writeStaged } from '../fs/atomic-file.js'
import { assertPrivateDirectory } from '../fs/private-directory.js'
import { readPrivateKeyFile } from '../fs/private-key-file.js'
import { makeDirectories } from '../fs/make-directories.js'

export interface IdentityPaths {
  key: string
  certificate: string
  caBundle: string
}

export function identityPaths(pkiDir: string): IdentityPaths {
  return {
    key: join(pkiDir, 'agent.key'),
    certificate: join(pkiDir, 'agent.pem'),
    caBundle: join(pkiDir, 'gateway-ca.pem'),
  }
}

export interface CertificateWindow {
  notBefore: Date
  notAfter: Date
}

export interface Identity {
  keyPem: string
  certificatePem: string
  caPem: string
  window: CertificateWindow
  serial: string
  fingerprint256: string
}

export function certificateWindow(
  certificatePem: string,
): CertificateWindow & { serial: string; fingerprint256: string } {
  const certificate = new X509Certificate(certificatePem)
  return {
    notBefore: new Date(certificate.validFrom),
    notAfter: new Date(certificate.validTo),
    serial: certificate.serialNumber,
    fingerprint256: certificate.fingerprint256.replaceAll(':', '').toLowerCase(),
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch {
    return false
  }
}

export async function identityStaged(pkiDir: string): Promise<boolean> {
  const paths = identityPaths(pkiDir)
  await finishInterruptedStaging(paths)
  return (await exists(paths.key)) && (await exists(paths.certificate))
}

/**
 * Stages a key and its certificate. Each file is renamed atomically; the pair is
 * renamed key first, so a crash between the two leaves `agent.pem.staged` that
 * `finishInterruptedStaging` completes on the next start.
 */
export async function stageIdentity(
  pkiDir: string,
  keyPem: string,
  certificatePem: string,
  caPem?: string,
): Promise<void> {
  await makeDirectories(pkiDir, 0o700)
  await assertPkiDirectoryPrivate(pkiDir)
  const paths = identityPaths(pkiDir)
  if (caPem !== undefined) await writeFileAtomic(paths.caBundle, caPem, 0o600)
  await writeStaged(paths.key, keyPem, 0o600)
  await writeStaged(paths.certificate, certificatePem, 0o600)
  await syncDirectory(pkiDir)
  await commitStaged(paths.key)
  await commitStaged(paths.certificate)
  await syncDirectory(pkiDir)
}

/**
 * Refuses a PKI directory that group or others may write: they could swap the key or plant
 * a link where the next key is staged. A missing directory is fine (it is created 0700).
 */
export async function assertPkiDirectoryPrivate(pkiDir: string): Promise<void> {
  await assertPrivateDirectory(
    pkiDir,
    (shown) =>
      new FleetkitError(
        'AGENT_CONFIG_INVALID',
        `the agent PKI directory ${pkiDir} is writable by group or others (mode ${shown}); refusing to keep a key there`,
        {
          actions: [
            `chmod 0700 ${pkiDir}`,
            "or set FLEETKIT_AGENT_PKI_DIR to a directory only the agent's user can write",
          ],
          data: { setting: 'FLEETKIT_AGENT_PKI_DIR', path: pkiDir, mode: shown },
        },
      ),
  )
}

/**
 * Reads the agent key, refusing one that group or others may read or write, or a link: such a
 * key may already be someone else's, and the certificate it holds lets them act as this node.
 */
async function readPrivateKey(path: string): Promise<string> {
  return readPrivateKeyFile(path, (problem) => {
    if (problem.kind === 'link') {
      return new FleetkitError(
        'AGENT_KEY_PERMISSIONS',
        `the agent key ${path} is a symbolic link; refusing to use it`,
        {
          actions: [
            `replace ${path} with the key file itself (mode 0600)`,
            'or enroll again with a new secret (fleetkit node token NODE --reissue)',
          ],
          data: { path, mode: 'link' },
        },
      )
    }
    const mode = problem.kind === 'mode' ? problem.mode : 'unknown'
    return new FleetkitError(
      'AGENT_KEY_PERMISSIONS',
      `the agent key ${path} is readable or writable by group or others (mode ${mode}); refusing to use it`,
      {
        actions: [
          `chmod 0600 ${path}`,
          "if others may have read it, enroll again with a new secret (fleetkit node token NODE --reissue: it revokes the node's certificates at enrollment)",
        ],
        data: { path, mode },
      },
    )
  })
}

/** The key check on its own, before anything reads the key; a missing key is for loadIdentity to report. */
async function assertKeyPrivate(path: string): Promise<void> {
  try {
    await readPrivateKey(path)
  } catch (error) {
    if (error instanceof FleetkitError) throw error
  }
}

async function finishInterruptedStaging(paths: IdentityPaths): Promise<void> {
  const stagedCertificate = `${paths.certificate}.staged`
  if (!(await exists(stagedCertificate)) || (await exists(`${paths.key}.staged`))) return
  // The key was renamed, the certificate was not: complete it when the pair matches.
  try {
    const certificate = new X509Certificate(await readFile(stagedCertificate, 'utf8'))
    if (certificate.checkPrivateKey(createPrivateKey(await readFile(paths.key, 'utf8')))) {
      await commitStaged(paths.certificate)
      await syncDirectory(join(paths.certificate, '..'))
    }
  } catch {
    // Leave it: loadIdentity reports what is wrong.
  }
}

/** Loads the staged identity; `fallbackCaFile` is the seed's pinned bundle, used until a renewal stages one. */
export async function loadIdentity(pkiDir: string, fallbackCaFile: string): Promise<Identity> {
  const paths = identityPaths(pkiDir)
  await assertKeyPrivate(paths.key)
  if (!(await identityStaged(pkiDir))) {
    throw new FleetkitError('IDENTITY_MISSING', `no agent key and certificate in ${pkiDir}`, {
      actions: ['fleetkit-agent enroll'],
      data: { pkiDir },
    })
  }
  let keyPem: string
  let certificatePem: string
  let caPem: string
  try {
    keyPem = await readPrivateKey(paths.key)
    certificatePem = await readFile(paths.certificate, 'utf8')
    caPem = (await exists(paths.caBundle))
      ? await readFile(paths.caBundle, 'utf8')
      : await readFile(fallbackCaFile, 'utf8')
  } catch (error) {
    if (error instanceof FleetkitError) throw error
    throw new FleetkitError(
      'IDENTITY_INVALID',
      `cannot read the agent identity in ${pkiDir}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
      {
        actions: ['fleetkit-agent doctor'],
        data: { pkiDir },
      },
    )
  }
  let window: ReturnType<typeof certificateWindow>
  try {
    window = certificateWindow(certificatePem)
    if (!new X509Certificate(certificatePem).checkPrivateKey(createPrivateKey(keyPem)))
      throw new Error('the key does not match the certificate')
  } catch (error) {
    throw new FleetkitError(
      'IDENTITY_INVALID',
      `the agent identity in ${pkiDir} is unusable: ${(error as Error).message}`,
      {
        actions: ['fleetkit-agent doctor'],
        data: { pkiDir },
      },
    )
  }
  return {
    keyPem,
    certificatePem,
    caPem,
    window: { notBefore: window.notBefore, notAfter: window.notAfter },
    serial: window.serial,
    fingerprint256: window.fingerprint256,
  }
}
