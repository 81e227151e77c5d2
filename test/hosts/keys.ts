// SSH keys of the test hosts: an operator key per helper run and a host key per host, both made
// with ssh-keygen before boot, so tests pin the host key and never trust on first use.
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

import { runHostCommandOk } from './exec.js'
import type { OperatorKey } from './types.js'

export interface KeyPair {
  privateKeyFile: string
  publicKey: string
}

/** A new ed25519 key pair at DIR/NAME (private, 0600) and DIR/NAME.pub. */
export async function generateKeyPair(dir: string, name: string, comment: string): Promise<KeyPair> {
  const privateKeyFile = join(dir, name)
  await runHostCommandOk('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', privateKeyFile])
  return { privateKeyFile, publicKey: (await readFile(`${privateKeyFile}.pub`, 'utf8')).trim() }
}

/** A given key pair written as DIR/NAME (private, 0600) and DIR/NAME.pub, as ssh-keygen would leave it. */
export async function writeKeyPair(
  dir: string,
  name: string,
  key: { privateKey: string; publicKey: string },
): Promise<KeyPair> {
  const privateKeyFile = join(dir, name)
  await writeFile(privateKeyFile, key.privateKey, { mode: 0o600 })
  await writeFile(`${privateKeyFile}.pub`, `${key.publicKey.trim()}\n`)
  return { privateKeyFile, publicKey: key.publicKey.trim() }
}

export function generateOperatorKey(dir: string): Promise<OperatorKey> {
  return generateKeyPair(dir, 'operator_ed25519', 'fleetkit-test-operator')
}

/** The known_hosts line for ADDRESS:PORT (OpenSSH writes a non-22 port as `[addr]:port`). */
export function knownHostsLine(address: string, port: number, hostPublicKey: string): string {
  const [type, key] = hostPublicKey.split(/\s+/)
  return `${port === 22 ? address : `[${address}]:${port}`} ${type} ${key}`
}
