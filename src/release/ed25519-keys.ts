// Ed25519 release keys in their three shapes: the private key as the PKCS#8 PEM that
// `openssl genpkey -algorithm ed25519` writes, the public key as base64 of its raw 32 bytes
// (fleet.yaml's release.publicKey), and as SPKI PEM (what openssl and the host verifier read).
import { type KeyObject, createPrivateKey, createPublicKey } from 'node:crypto'
import { readFile, stat } from 'node:fs/promises'

import { FleetkitError } from '../checks/fleetkit-error.js'

/** DER prefix of an Ed25519 SubjectPublicKeyInfo: SEQUENCE { AlgorithmIdentifier 1.3.101.112, BIT STRING (33 bytes) }. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/
/** How to make a signing key, in the actions of a refused one. */
const NEW_KEY =
  'fleetkit release keygen --output release.key   (or openssl genpkey -algorithm ed25519: docs/releases.md)'

export function publicKeyFromRaw(base64: string): KeyObject {
  const text = base64.trim()
  const raw = BASE64.test(text) ? Buffer.from(text, 'base64') : Buffer.alloc(0)
  if (raw.length !== 32 || raw.toString('base64') !== text) {
    throw new FleetkitError(
      'RELEASE_KEY_INVALID',
      'the release public key is not base64 of a raw 32-byte Ed25519 key',
      {
        data: { expected: 'base64 of 32 bytes (44 characters)', actual: `${text.length} characters` },
      },
    )
  }
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' })
}

export function rawPublicKey(key: KeyObject): string {
  const publicKey = key.type === 'private' ? createPublicKey(key) : key
  const der = publicKey.export({ format: 'der', type: 'spki' })
  return der.subarray(ED25519_SPKI_PREFIX.length).toString('base64')
}

function spkiPem(key: KeyObject): string {
  const publicKey = key.type === 'private' ? createPublicKey(key) : key
  return publicKey.export({ format: 'pem', type: 'spki' }).toString()
}

/** base64 raw public key -> SPKI PEM, for the host verifier's --public-key file. */
export function rawPublicKeyToSpkiPem(base64: string): string {
  return spkiPem(publicKeyFromRaw(base64))
}

/** SPKI PEM -> base64 raw public key, for fleet.yaml. */
export function spkiPemToRawPublicKey(pem: string): string {
  let key: KeyObject
  try {
    key = createPublicKey({ key: pem, format: 'pem' })
  } catch {
    throw new FleetkitError('RELEASE_KEY_INVALID', 'the public key is not a PEM public key')
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new FleetkitError(
      'RELEASE_KEY_INVALID',
      `the public key is ${key.asymmetricKeyType ?? 'unknown'}, not Ed25519`,
    )
  return rawPublicKey(key)
}

/**
 * Reads the offline signing key. Refuses a file that group or others can touch, and never
 * puts the file's content in an error: a parse failure says only that it is not an Ed25519 key.
 */
export async function loadSigningKey(path: string): Promise<KeyObject> {
  let mode: number
  try {
    mode = (await stat(path)).mode
  } catch {
    throw new FleetkitError('RELEASE_INPUT_INVALID', `cannot read the signing key file ${path}`, {
      actions: [NEW_KEY],
    })
  }
  if ((mode & 0o077) !== 0) {
    throw new FleetkitError(
      'RELEASE_KEY_UNPROTECTED',
      `the signing key ${path} has mode ${(mode & 0o777).toString(8).padStart(4, '0')}; group and others must have no access`,
      {
        actions: [`chmod 600 ${path}`],
        data: { expected: '0600', actual: (mode & 0o777).toString(8).padStart(4, '0') },
      },
    )
  }
  let key: KeyObject
  try {
    key = createPrivateKey({ key: await readFile(path), format: 'pem' })
  } catch {
    throw new FleetkitError('RELEASE_KEY_INVALID', `${path} is not a PEM private key`, {
      actions: [NEW_KEY],
    })
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new FleetkitError(
      'RELEASE_KEY_INVALID',
      `${path} holds a ${key.asymmetricKeyType ?? 'unknown'} key, not Ed25519`,
      { actions: [NEW_KEY] },
    )
  }
  return key
}
