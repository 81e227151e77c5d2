// Grammar checks for every value that reaches a seed or an inventory. A value that
// fails is refused with SEED_VALUE_INVALID naming the field; it is never escaped, and never echoed.
import { X509Certificate } from 'node:crypto'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { isReleaseVersion } from '../release/release-name.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const NODE_ID = /^[a-z][a-z0-9-]{0,62}$/
const SECRET_HEX = /^[0-9a-f]{64}$/
/** https, a DNS name or IPv4 address, an optional port and a path of unreserved characters only. */
const HTTPS_URL = /^https:\/\/[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::[0-9]{1,5})?(?:\/[A-Za-z0-9._~/-]*)?$/
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----\n((?:[A-Za-z0-9+/=]{1,76}\n)+)-----END CERTIFICATE-----\n?/g
const POSIX_USER = /^[a-z_][a-z0-9_-]{0,31}$/
const ABSOLUTE_PATH = /^\/[A-Za-z0-9._/-]{0,254}$/
const SSH_PUBLIC_KEY = /^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp256|ecdsa-sha2-nistp384|ecdsa-sha2-nistp521|sk-ssh-ed25519@openssh\.com) ([A-Za-z0-9+/]+={0,2})(?: ([A-Za-z0-9@._+-]{1,100}))?$/
const HOST_NAME = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$|^[0-9a-fA-F:]{2,39}$/
/** The sudoers rules a seed may grant: everything, with or without a password. */
const SUDO_RULE = /^ALL=\(ALL(?::ALL)?\) (?:NOPASSWD:)?ALL$/

/** Refuses a value without repeating it: a refused value may be a secret. */
export function invalidValue(field: string, expected: string): FleetkitError {
  return new FleetkitError('SEED_VALUE_INVALID', `${field} is not ${expected}; the value is refused, not escaped`, {
    actions: ['correct the value in the fleet definition (or the state) and render again', 'fleetkit validate'],
    data: { field, expected },
  })
}

function check(field: string, value: unknown, expected: string, ok: (v: string) => boolean): string {
  if (typeof value !== 'string' || !ok(value)) throw invalidValue(field, expected)
  return value
}

export function nodeIdValue(field: string, value: unknown): string {
  return check(field, value, 'a UUID or a node id (^[a-z][a-z0-9-]{0,62}$)', (v) => UUID.test(v) || NODE_ID.test(v))
}

export function secretHexValue(field: string, value: unknown): string {
  return check(field, value, '64 lowercase hexadecimal characters', (v) => SECRET_HEX.test(v))
}

export function httpsUrlValue(field: string, value: unknown): string {
  return check(field, value, 'an https URL of letters, digits and . _ ~ / - only (no spaces, quotes, query or shell metacharacters)', (v) => {
    if (v.length > 2048 || !HTTPS_URL.test(v)) return false
    try {
      const url = new URL(v)
      const port = url.port === '' ? 443 : Number(url.port)
      return url.protocol === 'https:' && port > 0 && port < 65536 && !v.includes('..')
    } catch {
      return false
    }
  })
}

export function versionValue(field: string, value: unknown): string {
  return check(field, value, 'a version MAJOR.MINOR.PATCH[-PRERELEASE]', isReleaseVersion)
}

export function base64Value(field: string, value: unknown, decodedBytes?: number): string {
  const expected = decodedBytes === undefined ? 'base64' : `base64 of ${decodedBytes} bytes`
  return check(field, value, expected, (v) => {
    if (v === '' || v.length > 65536 || !BASE64.test(v)) return false
    return decodedBytes === undefined || Buffer.from(v, 'base64').length === decodedBytes
  })
}

/**
 * One or more PEM certificates and nothing else: a private key, a stray line or a
 * certificate that does not parse is refused. Returns the blocks normalised to LF with one final newline.
 */
export function pemCertificatesValue(field: string, value: unknown): string {
  const expected = 'PEM certificates only (no private key, no other text)'
  if (typeof value !== 'string' || value.length > 65536) throw invalidValue(field, expected)
  const text = value.replace(/\r\n/g, '\n').trim() + '\n'
  const blocks: string[] = []
  let rest = text
  for (const match of text.matchAll(PEM_CERTIFICATE)) {
    blocks.push(`-----BEGIN CERTIFICATE-----\n${match[1]}-----END CERTIFICATE-----\n`)
    rest = rest.replace(match[0], '')
  }
  if (blocks.length === 0 || rest.trim() !== '') throw invalidValue(field, expected)
  for (const block of blocks) {
    try {
      new X509Certificate(block)
    } catch {
      throw invalidValue(field, expected)
    }
  }
  return blocks.join('')
}

export function posixUserValue(field: string, value: unknown, options: { allowRoot?: boolean } = {}): string {
  return check(field, value, options.allowRoot ? 'a POSIX user name' : 'a POSIX user name other than root', (v) => POSIX_USER.test(v) && (options.allowRoot === true || v !== 'root'))
}

export function absolutePathValue(field: string, value: unknown): string {
  return check(field, value, 'an absolute path of letters, digits and . _ / - (no "..")', (v) => ABSOLUTE_PATH.test(v) && !v.split('/').includes('..'))
}

export function sshPublicKeyValue(field: string, value: unknown): string {
  return check(field, value, 'an OpenSSH public key line (type, base64, optional plain comment)', (v) => {
    const match = SSH_PUBLIC_KEY.exec(v)
    if (!match) return false
    // The key blob starts with its own type name: a mislabelled key is refused too.
    const blob = Buffer.from(match[2]!, 'base64')
    const length = blob.length >= 4 ? blob.readUInt32BE(0) : -1
    return length > 0 && blob.subarray(4, 4 + length).toString('latin1') === match[1]
  })
}

export function hostNameValue(field: string, value: unknown): string {
  return check(field, value, 'a host name or IP address', (v) => v.length <= 253 && HOST_NAME.test(v))
}

export function portValue(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 65535) throw invalidValue(field, 'a TCP port 1-65535')
  return value
}

export function sudoRuleValue(field: string, value: unknown): string {
  return check(field, value, 'a sudoers rule of the form ALL=(ALL[:ALL]) [NOPASSWD:]ALL', (v) => SUDO_RULE.test(v))
}
