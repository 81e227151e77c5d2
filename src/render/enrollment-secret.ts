// A fresh single-use enrollment secret: 256 random bits as 64 hex characters. Only
// its SHA-256 goes to the state; the clear value goes into a seed or is printed once.
import { createHash, randomBytes } from 'node:crypto'

/** Randomness is injected so tests and golden files get a fixed secret. */
export type Rng = (bytes: number) => Buffer

export const systemRng: Rng = (bytes) => randomBytes(bytes)

export interface EnrollmentSecret {
  secret: string
  sha256: Buffer
}

export function newEnrollmentSecret(rng: Rng = systemRng): EnrollmentSecret {
  const secret = rng(32).toString('hex')
  return { secret, sha256: createHash('sha256').update(secret, 'utf8').digest() }
}

/** A deterministic rng for tests and golden files: SHA-256 in counter mode over a seed string. */
export function seededRng(seed: string): Rng {
  let counter = 0
  return (bytes) => {
    const chunks: Buffer[] = []
    let length = 0
    while (length < bytes) {
      const chunk = createHash('sha256').update(`${seed}:${counter++}`).digest()
      chunks.push(chunk)
      length += chunk.length
    }
    return Buffer.concat(chunks).subarray(0, bytes)
  }
}
