// P-256 key pairs and their PEM forms (PKCS#8 private, SPKI public), converted
// through Node's KeyObject so both WebCrypto and node:tls can use them.
import { createPrivateKey, createPublicKey } from 'node:crypto'

import { pemEncode } from './pem.js'
import { crypto } from './x509-provider.js'

const P256: EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' }
export const SIGNING_ALGORITHM: EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' } as EcdsaParams

export async function generateP256KeyPair(): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(P256, true, ['sign', 'verify']) as Promise<CryptoKeyPair>
}

export async function privateKeyToPem(key: CryptoKey): Promise<string> {
  return pemEncode('PRIVATE KEY', await crypto.subtle.exportKey('pkcs8', key))
}

/** Import a P-256 private key (PKCS#8 or SEC1 PEM) as a WebCrypto signing key. */
export async function importSigningKey(pem: string): Promise<CryptoKey> {
  const der = createPrivateKey(pem).export({ format: 'der', type: 'pkcs8' })
  return crypto.subtle.importKey('pkcs8', der, P256, false, ['sign'])
}

/** The public half of a private key PEM, as SPKI DER (for re-signing a certificate on the same key). */
export function publicKeyDerOf(privateKeyPem: string): Buffer {
  return createPublicKey(createPrivateKey(privateKeyPem)).export({ format: 'der', type: 'spki' })
}
