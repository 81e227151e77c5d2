// Signs a release directory's SHA256SUMS with the offline Ed25519 key and writes
// SHA256SUMS.sig. The key is read here and goes nowhere else: not into results or errors.
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { loadSigningKey, rawPublicKey } from './ed25519-keys.js'
import { SIGNATURE_FILE, SUMS_FILE } from './release-name.js'
import { parseSha256Sums, sha256Hex } from './sha256sums.js'
import { signSums, verifySumsSignature } from './signature.js'

export interface SignOptions {
  keyFile: string
  dir: string
}

export interface SignResult {
  /** @minLength 1 */
  dir: string
  /** @pattern SHA256SUMS$ */
  sumsFile: string
  /** @pattern SHA256SUMS\.sig$ */
  signatureFile: string
  /** @pattern ^[0-9a-f]{64}$ */
  sumsSha256: string
  /** @minItems 1 */
  files: string[]
  /**
   * base64 of the raw public key: the value of fleet.yaml's release.publicKey.
   * @pattern ^[A-Za-z0-9+/]{43}=$
   */
  publicKey: string
}

export async function signRelease(options: SignOptions): Promise<SignResult> {
  const sumsFile = join(options.dir, SUMS_FILE)
  let sums: Buffer
  try {
    sums = await readFile(sumsFile)
  } catch {
    throw new FleetkitError('RELEASE_INPUT_INVALID', `${sumsFile} does not exist`, {
      actions: ['fleetkit release pack --version VERSION --input DIST'],
    })
  }
  const parsed = parseSha256Sums(sums.toString('utf8'))
  if (parsed.lines.length === 0 || parsed.malformed > 0) {
    throw new FleetkitError('RELEASE_INPUT_INVALID', `${sumsFile} is not in sha256sum format`, {
      data: { lines: parsed.lines.length, malformed: parsed.malformed },
    })
  }
  const key = await loadSigningKey(options.keyFile)
  const signature = signSums(sums, key)
  // Check our own work before writing: a signature that does not verify must never be published.
  if (!verifySumsSignature(sums, signature, key)) throw new Error('the fresh signature does not verify')
  const signatureFile = join(options.dir, SIGNATURE_FILE)
  await writeFile(signatureFile, signature)
  return {
    dir: options.dir,
    sumsFile,
    signatureFile,
    sumsSha256: sha256Hex(sums),
    files: parsed.lines.map((line) => line.name),
    publicKey: rawPublicKey(key),
  }
}
