// Random certificate serial numbers: 16 random bytes as a positive DER integer
// (RFC 5280 asks for at most 20 octets and unpredictability).
import { type Rng, systemRng } from '../config/rng.js'

export function randomSerial(rng: Rng = systemRng): string {
  const bytes = Buffer.from(rng(16))
  // Clear the top bit (positive) and set the next so the integer keeps all 16 octets.
  bytes[0] = (bytes[0]! & 0x7f) | 0x40
  return bytes.toString('hex')
}
