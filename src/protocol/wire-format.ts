// The small readers every wire validator is built from: each takes untrusted JSON and returns
// a fresh, typed value or throws WireFormatError naming the field (never echoing its value).
export class WireFormatError extends Error {
  readonly path: string

  constructor(path: string, reason: string) {
    // The value is never part of the message: it may be a secret or hostile text.
    super(`${path}: ${reason}`)
    this.name = 'WireFormatError'
    this.path = path
  }
}

export type Json = Record<string, unknown>

/** A plain JSON object (not null, not an array); its own fields are read, never its prototype's. */
export function readObject(value: unknown, path: string): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new WireFormatError(path, 'must be a JSON object')
  return value as Json
}

/**
 * The object with its fields readable by name and nothing inherited: a plain object (what JSON.parse makes)
 * as it is, any other copied to a plain one of its own fields. For fixed names, none of which Object.prototype
 * has (JSON.parse makes a "__proto__" key an own field). On the heartbeat path, where a load site per field
 * keeps its inline cache to the one shape these objects have, instead of field()'s single site that sees
 * every shape and name of the protocol (0.3 us a heartbeat, bench/heartbeat-path.ts).
 */
export function ownFields<K extends string>(value: object): Partial<Record<K, unknown>> {
  const prototype = Object.getPrototypeOf(value) as unknown
  return (
    prototype === Object.prototype || prototype === null ? value : Object.fromEntries(Object.entries(value))
  ) as Partial<Record<K, unknown>>
}

/** The object's own field (undefined when absent), so `__proto__` or `toString` keys are never inherited. */
export function field(o: Json, name: string): unknown {
  return Object.hasOwn(o, name) ? o[name] : undefined
}

export interface StringRule {
  min?: number
  max: number
  pattern?: RegExp
  /** What the pattern means, for the error message. */
  expected?: string
}

export function readString(value: unknown, path: string, rule: StringRule): string {
  if (typeof value !== 'string') throw new WireFormatError(path, 'must be a string')
  if (value.length < (rule.min ?? 1))
    throw new WireFormatError(path, rule.min === 0 ? 'must be a string' : 'must not be empty')
  if (value.length > rule.max) throw new WireFormatError(path, `must be at most ${rule.max} characters`)
  if (rule.pattern && !rule.pattern.test(value))
    throw new WireFormatError(path, `must be ${rule.expected ?? `a string matching ${rule.pattern.source}`}`)
  return value
}

export function readInteger(value: unknown, path: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new WireFormatError(path, `must be an integer from ${min} to ${max}`)
  return value
}

export function readEnum<T extends string>(value: unknown, path: string, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value))
    throw new WireFormatError(path, `must be one of ${allowed.join(', ')}`)
  return value as T
}

export function readArray(value: unknown, path: string, max: number): unknown[] {
  if (!Array.isArray(value)) throw new WireFormatError(path, 'must be an array')
  if (value.length > max) throw new WireFormatError(path, `must have at most ${max} items`)
  return value
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/

/** An RFC 3339 time as the gateway writes it (`toISOString()`), kept as the string. */
export function readTime(value: unknown, path: string): string {
  const text = readString(value, path, { max: 40, pattern: ISO_TIME, expected: 'an RFC 3339 date-time' })
  if (Number.isNaN(Date.parse(text))) throw new WireFormatError(path, 'must be an RFC 3339 date-time')
  return text
}

const PEM_CERTIFICATE = /^\s*-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----\s*$/

/** One or more PEM certificates (a bundle); the content is checked by whoever uses it. */
export function readCertificatePem(value: unknown, path: string): string {
  return readString(value, path, { max: 256 * 1024, pattern: PEM_CERTIFICATE, expected: 'PEM certificates' })
}

/** C0 and C1 controls (ESC among them), and the invisible marks that reorder or hide text: a character class's body. */
export const CONTROL_CHARACTERS = '\\u0000-\\u001f\\u007f-\\u009f\\u200b-\\u200f\\u202a-\\u202e\\u2066-\\u2069'
const CONTROL = new RegExp(`[${CONTROL_CHARACTERS}]`, 'g')
// eslint-disable-next-line no-control-regex
const ESCAPE_SEQUENCE = /\u001b(\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(\u0007|\u001b\\)?|[@-Z\\-_])/g

// An unpaired UTF-16 surrogate (with the u flag a pair is one code point and does not match).
const LONE_SURROGATE = /\p{Cs}/gu

/**
 * Text from a host made safe to print on one terminal line and to store: escape sequences removed,
 * other control characters (newlines and NUL too) turned into spaces, an unpaired surrogate (which
 * PostgreSQL's jsonb refuses) into U+FFFD, cut to `max` characters.
 */
export function printableText(text: string, max: number): string {
  const clean = text
    .replace(ESCAPE_SEQUENCE, '')
    .replace(CONTROL, ' ')
    .replace(LONE_SURROGATE, '\ufffd')
    .replace(/ {2,}/g, ' ')
    .trim()
  return Array.from(clean).slice(0, max).join('')
}
