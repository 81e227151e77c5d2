// user_data as a NoCloud seed wants it. The API takes it plain, base64, or gzip+base64 (cloud-init's Hetzner
// source decodes base64 itself; NoCloud does not), and fleetkit sends gzip+base64: decode both layers here.
import { gunzipSync } from 'node:zlib'

const BASE64 = /^[A-Za-z0-9+/=\s]+$/

export function seedUserData(userData: string | undefined): Buffer {
  if (userData === undefined) return Buffer.from('#cloud-config\n{}\n')
  let bytes = Buffer.from(userData, 'utf8')
  if (BASE64.test(userData)) {
    const decoded = Buffer.from(userData, 'base64')
    if (isGzip(decoded) || /^(#|Content-Type:)/.test(decoded.toString('utf8', 0, 16))) bytes = decoded
  }
  return isGzip(bytes) ? gunzipSync(bytes) : bytes
}

function isGzip(bytes: Buffer): boolean {
  return bytes.length > 2 && bytes[0] === 0x1f && bytes[1] === 0x8b
}
