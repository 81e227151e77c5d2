// Ed25519 over the exact bytes of SHA256SUMS, stored as base64 of the raw 64-byte signature:
// the same bytes `openssl pkeyutl -sign -rawin` writes (Ed25519 is deterministic, so they are identical).
import { type KeyObject, sign, verify } from 'node:crypto'

export function signSums(sums: Uint8Array, privateKey: KeyObject): string {
  return `${sign(null, sums, privateKey).toString('base64')}\n`
}

/** False for anything but base64 of 64 bytes that verifies; never throws on hostile input. */
export function verifySumsSignature(sums: Uint8Array, signatureFile: string, publicKey: KeyObject): boolean {
  const text = signatureFile.replace(/\s+/g, '')
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return false
  const signature = Buffer.from(text, 'base64')
  if (signature.length !== 64) return false
  try {
    return verify(null, sums, publicKey, signature)
  } catch {
    return false
  }
}
