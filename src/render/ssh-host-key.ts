// An Ed25519 SSH host key generated for one worker host: the private half goes only
// into its seed, the public half into the state, so the first SSH connection is verified.
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto'

import { type Rng, systemRng } from '../config/rng.js'

export interface SshHostKey {
  /** OpenSSH private key file ("-----BEGIN OPENSSH PRIVATE KEY-----"), unencrypted. */
  privateKey: string
  /** "ssh-ed25519 AAAA... COMMENT" */
  publicKey: string
}

const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')
const KEY_TYPE = 'ssh-ed25519'

function sshString(data: Buffer | string): Buffer {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'latin1') : data
  const length = Buffer.alloc(4)
  length.writeUInt32BE(bytes.length)
  return Buffer.concat([length, bytes])
}

function uint32(value: number): Buffer {
  const out = Buffer.alloc(4)
  out.writeUInt32BE(value >>> 0)
  return out
}

/** The key is derived from 32 bytes of the injected rng, so golden files can fix it. */
export function generateSshHostKey(comment: string, rng: Rng = systemRng): SshHostKey {
  const seed = rng(32)
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  })
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' })
  const publicRaw = spki.subarray(spki.length - 32)
  const publicBlob = Buffer.concat([sshString(KEY_TYPE), sshString(publicRaw)])

  // openssh-key-v1 (PROTOCOL.key): no cipher, one key, a check integer repeated, padding 1, 2, 3...
  const check = rng(4).readUInt32BE(0)
  let section = Buffer.concat([
    uint32(check),
    uint32(check),
    sshString(KEY_TYPE),
    sshString(publicRaw),
    sshString(Buffer.concat([seed, publicRaw])),
    sshString(comment),
  ])
  const padding: number[] = []
  for (let i = 1; (section.length + padding.length) % 8 !== 0; i++) padding.push(i)
  section = Buffer.concat([section, Buffer.from(padding)])
  const body = Buffer.concat([
    Buffer.from('openssh-key-v1\0', 'latin1'),
    sshString('none'),
    sshString('none'),
    sshString(''),
    uint32(1),
    sshString(publicBlob),
    sshString(section),
  ])
  const lines = body.toString('base64').match(/.{1,70}/g) ?? []
  return {
    privateKey: `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`,
    publicKey: `${KEY_TYPE} ${publicBlob.toString('base64')} ${comment}`,
  }
}

/** The key's fingerprint as `ssh-keygen -lf` prints it: SHA256: and the unpadded base64 of the key blob's digest. */
export function sshKeyFingerprint(publicKey: string): string {
  const blob = Buffer.from(publicKey.trim().split(/\s+/)[1] ?? '', 'base64')
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`
}
