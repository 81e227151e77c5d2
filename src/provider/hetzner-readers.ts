// Every Hetzner Cloud answer the client uses, checked against the shape it needs before it is used:
// one small reader per resource; a mismatch is PROVIDER_RESPONSE_INVALID naming the field and the call.
import { isIPv4, isIPv6 } from 'node:net'

import { FleetkitError } from '../checks/fleetkit-error.js'
import type {
  Action,
  Firewall,
  Image,
  Labels,
  Location,
  PlacementGroup,
  Server,
  ServerType,
  SshKey,
  Volume,
} from './hetzner-types.js'

/** Which answer is being read. */
export interface Answer {
  method: string
  path: string
  /** The request may have taken effect (a POST that is not idempotent): a create looks it up by its label. */
  ambiguous: boolean
}

/** Reads `value`, found at `field` (`server.id`, `servers[3].labels`; '' for the whole body), or throws. */
export type Reader<T> = (value: unknown, answer: Answer, field: string) => T

type Json = Record<string, unknown>

/** An ID the API gives a resource or an action: a positive integer (never NaN, 0, a string or a float). */
export function isResourceId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0
}

/** A provider ID the state recorded as text, when it is one; undefined for null or anything unusable ('undefined', 'NaN'). */
export function recordedId(text: string | null): number | undefined {
  if (text === null || !/^[1-9][0-9]{0,15}$/.test(text)) return undefined
  const id = Number(text)
  return isResourceId(id) ? id : undefined
}

function invalidAnswer(answer: Answer, field: string, expected: string, value: unknown): FleetkitError {
  const found = describe(value)
  const where = field === '' ? 'a body' : field
  return new FleetkitError(
    'PROVIDER_RESPONSE_INVALID',
    `Hetzner Cloud answered ${answer.method} ${answer.path} with ${where} that is ${found}, not ${expected}` +
      (answer.ambiguous ? '; the request may have taken effect' : ''),
    {
      actions: [
        'run it again (a create is looked up by its fleetkit.node_id label first, never sent blindly twice)',
        'if it persists, report the call and the field to Hetzner support and to fleetkit',
      ],
      data: {
        field: field === '' ? '(body)' : field,
        method: answer.method,
        path: answer.path,
        expected,
        found,
        ambiguous: answer.ambiguous,
      },
    },
  )
}

/** What was there instead, in a few words: its type (and a number's value), never a string's content. */
function describe(value: unknown): string {
  if (value === undefined) return 'missing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'number') return `the number ${value}`
  if (typeof value === 'string') return `a string of ${value.length} characters`
  return `a ${typeof value}`
}

const at = (field: string, key: string | number) =>
  typeof key === 'number' ? `${field}[${key}]` : field === '' ? key : `${field}.${key}`

function object(value: unknown, answer: Answer, field: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalidAnswer(answer, field, 'an object', value)
  return value as Json
}

const readId: Reader<number> = (value, answer, field) => {
  if (!isResourceId(value)) throw invalidAnswer(answer, field, 'a positive integer', value)
  return value
}

const readString: Reader<string> = (value, answer, field) => {
  if (typeof value !== 'string') throw invalidAnswer(answer, field, 'a string', value)
  return value
}

const readNumber: Reader<number> = (value, answer, field) => {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidAnswer(answer, field, 'a number', value)
  return value
}

const readLabels: Reader<Labels> = (value, answer, field) => {
  const labels = object(value, answer, field)
  for (const [key, one] of Object.entries(labels)) readString(one, answer, at(field, key))
  return labels as Labels
}

function oneOf<T extends string>(...values: T[]): Reader<T> {
  return (value, answer, field) => {
    if (!(values as unknown[]).includes(value)) throw invalidAnswer(answer, field, `one of ${values.join(', ')}`, value)
    return value as T
  }
}

function nullable<T>(read: Reader<T>): Reader<T | null> {
  return (value, answer, field) => (value === null ? null : read(value, answer, field))
}

export function listOf<T>(read: Reader<T>): Reader<T[]> {
  return (value, answer, field) => {
    if (!Array.isArray(value)) throw invalidAnswer(answer, field, 'a list', value)
    return value.map((item, i) => read(item, answer, at(field, i)))
  }
}

/**
 * Checks `fields` of the object at `field` with their readers and returns it as `T`: the fields the
 * client uses are checked, the others the API sends are kept as they are.
 */
function shape<T>(fields: Record<string, Reader<unknown>>): Reader<T> {
  return (value, answer, field) => {
    const record = object(value, answer, field)
    for (const [key, read] of Object.entries(fields)) read(record[key], answer, at(field, key))
    return record as T
  }
}

/** A field that may be absent; when present it must read. */
function optional<T>(read: Reader<T>): Reader<T | undefined> {
  return (value, answer, field) => (value === undefined ? undefined : read(value, answer, field))
}

/** An address as `text`, or a FleetkitError: the client stores what it reads in PostgreSQL's inet columns. */
function ipAddress(expected: string, valid: (text: string) => boolean): Reader<string> {
  return (value, answer, field) => {
    if (typeof value !== 'string' || !valid(value)) throw invalidAnswer(answer, field, expected, value)
    return value
  }
}

/** A prefix length of 0 to 128 after the slash, digits only. */
const IPV6_PREFIX = /^(?:[0-9]|[1-9][0-9]|1[01][0-9]|12[0-8])$/

/**
 * The server's IPv6, which the API gives as its network (`2001:db8:1::/64`); a bare address is taken too.
 * No zone (`%eth0`): inet has none.
 */
function isIpv6Network(text: string): boolean {
  const slash = text.indexOf('/')
  const address = slash === -1 ? text : text.slice(0, slash)
  return isIPv6(address) && !address.includes('%') && (slash === -1 || IPV6_PREFIX.test(text.slice(slash + 1)))
}

const named = { id: readId, name: readString }
const labelled = { ...named, labels: readLabels }
const architecture = oneOf('x86', 'arm')
const ipv4 = shape<{ ip: string }>({ ip: ipAddress('an IPv4 address', isIPv4) })
const ipv6 = shape<{ ip: string }>({ ip: ipAddress('an IPv6 network or address', isIpv6Network) })

export const readAction = shape<Action>({
  id: readId,
  command: readString,
  status: oneOf('running', 'success', 'error'),
  error: optional(nullable(shape({ code: optional(readString), message: optional(readString) }))),
})

export const readLocation = shape<Location>(named)

export const readServerType = shape<ServerType>({
  ...named,
  cores: readNumber,
  memory: readNumber,
  disk: readNumber,
  architecture,
  deprecated: optional(
    nullable((value, answer, field) => {
      if (typeof value !== 'boolean') throw invalidAnswer(answer, field, 'true or false', value)
      return value
    }),
  ),
})

export const readImage = shape<Image>({ id: readId, name: nullable(readString), architecture })

export const readServer = shape<Server>({
  ...labelled,
  status: readString,
  server_type: shape({ name: readString }),
  datacenter: shape({ location: shape({ name: readString }) }),
  image: nullable(shape({ name: nullable(readString) })),
  public_net: shape({ ipv4: nullable(ipv4), ipv6: nullable(ipv6) }),
  // Hetzner's private networks are IPv4 only.
  private_net: listOf(ipv4),
})

export const readVolume = shape<Volume>({
  ...labelled,
  status: readString,
  server: nullable(readId),
  size: readNumber,
  linux_device: readString,
})

export const readSshKey = shape<SshKey>(named)

const readRule = shape({
  direction: oneOf('in', 'out'),
  protocol: readString,
  port: optional(nullable(readString)),
  source_ips: optional(listOf(readString)),
  description: optional(nullable(readString)),
})

export const readFirewall = shape<Firewall>({ ...labelled, rules: listOf(readRule) })

export const readPlacementGroup = shape<PlacementGroup>(named)

/** The answer's `key`, read; the body must be an object. */
export function readKey<T>(body: unknown, answer: Answer, key: string, read: Reader<T>): T {
  return read(object(body, answer, '')[key], answer, key)
}

/** One page of a list: its items under `key`, and the next page (null on the last) from meta.pagination. */
export function readPage<T>(
  body: unknown,
  answer: Answer,
  key: string,
  read: Reader<T>,
  page: number,
): { items: T[]; nextPage: number | null } {
  const items = readKey(body, answer, key, listOf(read))
  const meta = readKey(body, answer, 'meta', shape<{ pagination: { next_page: unknown } }>({ pagination: object }))
  const next = meta.pagination.next_page
  // A next page that is missing, or not after this one, would end the list early or loop: never guessed.
  if (next !== null && !(isResourceId(next) && next > page))
    throw invalidAnswer(answer, 'meta.pagination.next_page', `null or a page after ${page}`, next)
  return { items, nextPage: next }
}
