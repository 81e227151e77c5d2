// Grammar checks for every value that reaches a seed or an inventory. A value that
// fails is refused with SEED_VALUE_INVALID naming the field; it is never escaped, and never echoed.
import { X509Certificate } from 'node:crypto'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { GRAMMAR, type GrammarName, isNodeIdOrUuid, isValid } from '../definition/grammar.js'

// Fleet values are checked by the grammar validate uses (src/definition/grammar.ts), so a value
// validate accepted never reaches SEED_VALUE_INVALID here. The rest are the seed's own inputs.
const SECRET_HEX = /^[0-9a-f]{64}$/
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----\n((?:[A-Za-z0-9+/=]{1,76}\n)+)-----END CERTIFICATE-----\n?/g
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

function grammarValue(field: string, value: unknown, name: GrammarName): string {
  if (!isValid(name, value)) throw invalidValue(field, GRAMMAR[name].words)
  return value
}

export function nodeIdValue(field: string, value: unknown): string {
  return check(field, value, `a UUID or ${GRAMMAR.nodeId.words}`, isNodeIdOrUuid)
}

export function secretHexValue(field: string, value: unknown): string {
  return check(field, value, '64 lowercase hexadecimal characters', (v) => SECRET_HEX.test(v))
}

export function httpsUrlValue(field: string, value: unknown): string {
  return grammarValue(field, value, 'httpsUrl')
}

/** One https URL, or several comma-separated (a gateway and its replicas), each of the grammar. */
export function httpsUrlListValue(field: string, value: unknown): string {
  if (typeof value !== 'string') return httpsUrlValue(field, value)
  return value
    .split(',')
    .map((url) => httpsUrlValue(field, url))
    .join(',')
}

export function versionValue(field: string, value: unknown): string {
  return grammarValue(field, value, 'releaseVersion')
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
  const expected = options.allowRoot ? GRAMMAR.posixUser.words : `${GRAMMAR.posixUser.words}, other than root`
  return check(field, value, expected, (v) => isValid('posixUser', v) && (options.allowRoot === true || v !== 'root'))
}

export function absolutePathValue(field: string, value: unknown): string {
  return grammarValue(field, value, 'mountPoint')
}

export function deviceValue(field: string, value: unknown): string {
  return grammarValue(field, value, 'device')
}

export function sshPublicKeyValue(field: string, value: unknown): string {
  return grammarValue(field, value, 'sshPublicKey')
}

export function hostNameValue(field: string, value: unknown): string {
  return grammarValue(field, value, 'sshHost')
}

export function cidrValue(field: string, value: unknown): string {
  return grammarValue(field, value, 'cidr')
}

export function portValue(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 65535)
    throw invalidValue(field, 'a TCP port 1-65535')
  return value
}

export function sudoRuleValue(field: string, value: unknown): string {
  return check(field, value, 'a sudoers rule of the form ALL=(ALL[:ALL]) [NOPASSWD:]ALL', (v) => SUDO_RULE.test(v))
}
