// `fleetkit release keygen`: a new Ed25519 release signing key, written 0600 as the PKCS#8 PEM that
// `openssl genpkey -algorithm ed25519` writes, never over an existing file; reports only the public half.
import { generateKeyPairSync } from 'node:crypto'
import { lstat } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { assertSecretOutsideGit, type GitRunner } from '../fs/output-in-git.js'
import { createPrivateFile } from '../fs/private-file.js'
import { rawPublicKey } from './ed25519-keys.js'
import { makeDirectories } from '../fs/make-directories.js'

export interface KeygenOptions {
  /** The private key file to create; it must not exist. */
  output: string
  /** Write it inside a Git work tree that does not ignore it (SECRET_OUTPUT_IN_GIT otherwise). Never overwrites. */
  force: boolean
  git?: GitRunner
}

export interface KeygenResult {
  /**
   * The private key file written (0600, PKCS#8 PEM); its content is never reported.
   * @minLength 1
   */
  keyFile: string
  /**
   * base64 of the raw public key: the value of fleet.yaml's release.publicKey.
   * @pattern ^[A-Za-z0-9+/]{43}=$
   */
  publicKey: string
}

/** errno codes of a path that cannot be written: the --output given is what to change. */
const PATH_ERRNOS = new Set(['EACCES', 'EPERM', 'ENOENT', 'ENOTDIR', 'EISDIR', 'ENAMETOOLONG', 'ELOOP'])

function keyExists(path: string): FleetkitError {
  return new FleetkitError(
    'RELEASE_KEY_EXISTS',
    `${path} already exists; a signing key is never overwritten (not even with --force): every host trusts the key it holds`,
    {
      actions: [
        `fleetkit release sign --key ${path} --dir DIR   (sign with the key you have)`,
        'fleetkit release keygen --output NEW.key   (a new key: put its public key in release.publicKey and re-sign)',
      ],
      data: { path },
    },
  )
}

/**
 * Refuses an existing path and a Git work tree that would pick the key up, then generates the key
 * and creates the file 0600 (O_EXCL: a file that appeared meanwhile is refused the same way).
 */
export async function generateSigningKey(options: KeygenOptions): Promise<KeygenResult> {
  if (options.output === '-' || options.output === '') {
    throw new FleetkitError('USAGE_INVALID', 'the private key is written only to a file: pass --output FILE', {
      actions: ['fleetkit release keygen --output /media/offline/release.key'],
    })
  }
  const keyFile = resolve(options.output)
  // lstat: a link, even a dangling one, is something there too.
  const present = await lstat(keyFile).then(
    () => true,
    () => false,
  )
  if (present) throw keyExists(keyFile)
  await assertSecretOutsideGit({
    path: keyFile,
    what: 'the release signing key',
    outside: 'fleetkit release keygen --output /media/offline/release.key   (outside any repository)',
    retry: `fleetkit release keygen --output ${options.output}`,
    force: options.force,
    ...(options.git ? { git: options.git } : {}),
  })
  const { privateKey } = generateKeyPairSync('ed25519')
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' })
  try {
    await makeDirectories(dirname(keyFile), 0o700)
    await createPrivateFile(keyFile, pem)
  } catch (error) {
    const { code: errno, path } = error as NodeJS.ErrnoException
    // The key file made meanwhile; a file where a directory of its path should be is a wrong path instead.
    if (errno === 'EEXIST' && path === keyFile) throw keyExists(keyFile)
    // A full or read-only filesystem is FILESYSTEM_WRITE_FAILED (the classifier); a path that cannot be written is input.
    if (errno === undefined || !(PATH_ERRNOS.has(errno) || errno === 'EEXIST')) throw error
    throw new FleetkitError(
      'RELEASE_INPUT_INVALID',
      `cannot write the signing key to ${keyFile} (${errno === 'EEXIST' ? `${path} is a file, not a directory` : errno})`,
      {
        actions: ['fleetkit release keygen --output FILE   (a writable directory only you can write)'],
        data: { path: keyFile, errno },
        cause: error,
      },
    )
  }
  return { keyFile, publicKey: rawPublicKey(privateKey) }
}
