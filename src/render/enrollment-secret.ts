// A fresh single-use enrollment secret: 256 random bits as 64 hex characters. Only
// its SHA-256 goes to the state; the clear value goes into a seed or is printed once.
import { createHash } from 'node:crypto'

import { type Rng, systemRng } from '../config/rng.js'

export interface EnrollmentSecret {
  secret: string
  sha256: Buffer
}

export function newEnrollmentSecret(rng: Rng = systemRng): EnrollmentSecret {
  const secret = rng(32).toString('hex')
  return { secret, sha256: createHash('sha256').update(secret, 'utf8').digest() }
}
