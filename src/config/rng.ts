// The injected source of randomness: every random choice (secrets, serials, host keys, renewal
// and backoff jitter) takes an Rng, so tests and golden files pass a seeded one.
import { createHash, randomBytes } from 'node:crypto'

/** `bytes` random bytes. Numbers in [0, 1) come from `unitInterval`, so one type serves both uses. */
export type Rng = (bytes: number) => Buffer

export const systemRng: Rng = (bytes) => randomBytes(bytes)

/** A uniform number in [0, 1) from 48 random bits (as many as a double holds exactly and more than jitter needs). */
export function unitInterval(rng: Rng): number {
  return rng(6).readUIntBE(0, 6) / 2 ** 48
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

/** An rng whose unitInterval draws are `values` in turn (then the last again): for tests of bounds. */
export function unitIntervalSequence(values: readonly number[]): Rng {
  let index = 0
  return (bytes) => {
    const value = values[Math.min(index++, values.length - 1)] ?? 0
    const buffer = Buffer.alloc(Math.max(bytes, 6))
    buffer.writeUIntBE(Math.min(Math.floor(value * 2 ** 48), 2 ** 48 - 1), 0, 6)
    return buffer.subarray(0, bytes)
  }
}
