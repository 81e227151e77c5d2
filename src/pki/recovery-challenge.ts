// Recovery challenges: stateless, MAC'd with a key derived from the gateway's server key (every
// gateway sharing the PKI directory holds the same one, so each accepts another's challenge), bound to the node and its recovery counter, which makes each single-use.
import {
  createHash,
  createHmac,
  createPublicKey,
  randomBytes,
  timingSafeEqual,
  verify,
  X509Certificate,
} from 'node:crypto'

/** How long a challenge is valid: the agent signs and answers at once. */
export const CHALLENGE_LIFETIME_MS = 120_000

export interface ChallengeClaims {
  nodeId: string
  counter: number
  expiresAt: Date
}

function macKey(serverKeyPem: string): Buffer {
  return createHash('sha256').update('fleetkit recovery challenge v1\0').update(serverKeyPem).digest()
}

function mac(serverKeyPem: string, payload: string): string {
  return createHmac('sha256', macKey(serverKeyPem)).update(payload).digest('base64url')
}

/** `v1.<node id b64url>.<counter>.<expires ms>.<nonce>.<mac>` */
export function issueChallenge(
  serverKeyPem: string,
  claims: { nodeId: string; counter: number; now: Date },
): { challenge: string; expiresAt: Date } {
  const expiresAt = new Date(claims.now.getTime() + CHALLENGE_LIFETIME_MS)
  const payload = [
    'v1',
    Buffer.from(claims.nodeId, 'utf8').toString('base64url'),
    String(claims.counter),
    String(expiresAt.getTime()),
    randomBytes(16).toString('base64url'),
  ].join('.')
  return { challenge: `${payload}.${mac(serverKeyPem, payload)}`, expiresAt }
}

/** The claims of a challenge this server key issued, unexpired at `now`; undefined for anything else. */
export function readChallenge(serverKeyPem: string, challenge: string, now: Date): ChallengeClaims | undefined {
  const parts = challenge.split('.')
  if (parts.length !== 6 || parts[0] !== 'v1') return undefined
  const payload = parts.slice(0, 5).join('.')
  const given = Buffer.from(parts[5]!, 'utf8')
  const expected = Buffer.from(mac(serverKeyPem, payload), 'utf8')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
  const counter = Number(parts[2])
  const expiresAt = new Date(Number(parts[3]))
  if (
    !Number.isSafeInteger(counter) ||
    counter < 0 ||
    Number.isNaN(expiresAt.getTime()) ||
    now.getTime() > expiresAt.getTime()
  )
    return undefined
  return { nodeId: Buffer.from(parts[1]!, 'base64url').toString('utf8'), counter, expiresAt }
}

/** Whether `signatureBase64` is the certificate key's ECDSA-SHA256 signature of `signed`. */
export function challengeSignedBy(certificatePem: string, signed: Buffer, signatureBase64: string): boolean {
  try {
    const key = createPublicKey(new X509Certificate(certificatePem).publicKey.export({ format: 'pem', type: 'spki' }))
    return verify('sha256', signed, { key, dsaEncoding: 'der' }, Buffer.from(signatureBase64, 'base64'))
  } catch {
    return false
  }
}
