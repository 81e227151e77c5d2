// One grammar per value: what a release version, URL, SSH key or user, host, path or name must be.
// The schema's patterns equal these (a test holds them together), validate runs the full checks, and
// the renderers and the agent's config reader refuse by the same functions. Pure: no Node.js imports,
// so the agent bundle can import it.

export interface ValueGrammar {
  /** The JSON Schema `pattern` (ECMA-262): schema/fleet.schema.json carries exactly this string. */
  pattern: string
  /** The schema's `maxLength`, when the value has one. */
  maxLength?: number
  /** What is expected, in words: error messages say this instead of the regex. */
  words: string
  /**
   * A check the regex cannot say (a URL that parses, a key blob of its own type, an IPv6 address).
   * validate runs it after the schema, so a renderer never meets a value validate accepted and it refuses.
   */
  extra?: (value: string) => boolean
}

/** An https or http URL: a DNS name or IPv4 address, a port 1-65535, a path of unreserved characters, no "..". */
function urlPattern(schemes: string): string {
  const port = '(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?'
  return `^(?!.*\\.\\.)${schemes}://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?${port}(?:/[A-Za-z0-9._~/-]*)?$`
}

/** The WHATWG parser has the last word on a host: 1.2.3.999 matches the regex but is no address. */
function parsesAsUrl(value: string): boolean {
  try {
    const url = new URL(value)
    return url.hostname !== '' && url.username === '' && url.password === ''
  } catch {
    return false
  }
}

const SSH_KEY_TYPES =
  '(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp256|ecdsa-sha2-nistp384|ecdsa-sha2-nistp521|sk-ssh-ed25519@openssh\\.com|sk-ecdsa-sha2-nistp256@openssh\\.com)'

/** The key blob starts with its own type name: a mislabelled or truncated key is refused. */
function sshKeyBlobMatchesType(value: string): boolean {
  const [type = '', body = ''] = value.split(' ')
  let bytes: string
  try {
    bytes = atob(body)
  } catch {
    return false
  }
  if (bytes.length < 4) return false
  const length =
    ((bytes.charCodeAt(0) << 24) | (bytes.charCodeAt(1) << 16) | (bytes.charCodeAt(2) << 8) | bytes.charCodeAt(3)) >>> 0
  return length > 0 && length <= bytes.length - 4 && bytes.slice(4, 4 + length) === type
}

/** An IPv6 address (no zone), in any of its written forms, by its groups: no dependency for this much. */
export function isIpv6Address(text: string): boolean {
  let head = text
  // A trailing dotted IPv4 (::ffff:192.0.2.1) stands for the last two groups.
  const lastColon = text.lastIndexOf(':')
  const tail = text.slice(lastColon + 1)
  if (tail.includes('.')) {
    if (lastColon < 0 || !IPV4_ADDRESS.test(tail)) return false
    head = `${text.slice(0, lastColon + 1)}0:0`
  }
  const halves = head.split('::')
  if (halves.length > 2) return false
  const all = halves.flatMap((part) => (part === '' ? [] : part.split(':')))
  if (!all.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return false
  return halves.length === 2 ? all.length < 8 : all.length === 8
}

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])'
const IPV4_ADDRESS = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`)
const PATH_WITHOUT_DOTDOT = '(?!(?:.*/)?\\.\\.(?:/|$))'

export const GRAMMAR = {
  dnsLabel: {
    pattern: '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$',
    words: 'a DNS label: lowercase letters, digits and "-", at most 63, not starting or ending with "-"',
  },
  nodeId: {
    // Also the host name a worker seed sets, so it ends like a DNS label: not in "-".
    pattern: '^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$',
    words: 'a node id: a lowercase letter, then lowercase letters, digits and "-", at most 63, not ending with "-"',
  },
  httpsUrl: {
    pattern: urlPattern('https'),
    maxLength: 2048,
    words:
      'an https:// URL: a host name or IPv4 address, an optional port and a path of letters, digits and . _ ~ / - (no query, spaces, quotes or "..")',
    extra: parsesAsUrl,
  },
  endpointUrl: {
    pattern: urlPattern('https?'),
    maxLength: 2048,
    words:
      'an http:// or https:// URL: a host name or IPv4 address, an optional port and a path of letters, digits and . _ ~ / -',
    extra: parsesAsUrl,
  },
  releaseVersion: {
    // No "+build": S3 reads "+" in a path as a space, and the version is in the archive's URL.
    pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z][0-9A-Za-z.-]*)?$',
    maxLength: 64,
    words:
      'a version MAJOR.MINOR.PATCH with an optional -PRERELEASE of letters, digits, "." and "-" (no "+build"), at most 64 characters',
  },
  releasePublicKey: {
    pattern: '^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$',
    words: 'base64 of a raw 32-byte Ed25519 public key (44 characters ending in "=")',
  },
  cidr: {
    pattern: `^(${OCTET}(\\.${OCTET}){3}/(3[0-2]|[12]?[0-9])|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))$`,
    maxLength: 49,
    words: 'an IPv4 or IPv6 CIDR such as 10.0.0.0/8 or fd00::/8',
    extra: (value: string) => !value.includes(':') || isIpv6Address(value.slice(0, value.indexOf('/'))),
  },
  sshPublicKey: {
    pattern: `^${SSH_KEY_TYPES} [A-Za-z0-9+/]+={0,2}( [A-Za-z0-9@._+-]{1,100})?$`,
    maxLength: 16384,
    words: 'an OpenSSH public key line: type, base64 key, and an optional comment of letters, digits and @ . _ + -',
    extra: sshKeyBlobMatchesType,
  },
  posixUser: {
    pattern: '^[a-z_][a-z0-9_-]{0,31}$',
    words: 'a POSIX user name: a lowercase letter or "_", then lowercase letters, digits, "_" and "-", at most 32',
  },
  sshHost: {
    pattern:
      '^(?=.{1,253}$)((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)$',
    words:
      'a host name, tailnet name, IPv4 or IPv6 address (labels of letters, digits and "-", not starting or ending with "-")',
    extra: (value: string) => !value.includes(':') || isIpv6Address(value),
  },
  mountPoint: {
    pattern: `^/${PATH_WITHOUT_DOTDOT}[A-Za-z0-9._/-]{0,254}$`,
    words: 'an absolute path of letters, digits and . _ / - (no "..")',
  },
  device: {
    pattern: `^(/dev/${PATH_WITHOUT_DOTDOT}[A-Za-z0-9/_.-]{1,250}|[a-z0-9][a-z0-9-]{0,62})$`,
    words: 'a block device under /dev/ (no "..") or a provider volume name (lowercase letters, digits and "-")',
  },
  filePath: {
    pattern: '^[^\\u0000-\\u001f\\u007f]+$',
    maxLength: 4096,
    words: 'a file path without control characters, at most 4096 characters',
  },
  providerName: {
    pattern: '^[a-z0-9][a-z0-9-]{0,31}$',
    words: 'a provider name: lowercase letters, digits and "-", at most 32, starting with a letter or digit',
  },
  imageName: {
    pattern: '^[a-z0-9][a-z0-9._-]{0,63}$',
    words: 'a name of lowercase letters, digits and . _ -, at most 64, starting with a letter or digit',
  },
  envName: {
    pattern: '^[A-Z_][A-Z0-9_]{0,127}$',
    words: 'an environment variable name: uppercase letters, digits and "_", not starting with a digit',
  },
  keyName: {
    pattern: '^[^\\u0000-\\u001f\\u007f]{1,128}$',
    words: 'a key name of 1 to 128 characters without control characters',
  },
} as const satisfies Record<string, ValueGrammar>

export type GrammarName = keyof typeof GRAMMAR

const compiled = new Map<GrammarName, RegExp>()

function regexOf(name: GrammarName): RegExp {
  let regex = compiled.get(name)
  if (!regex) {
    // The same flag ajv compiles schema patterns with, so \u escapes and lookaheads mean the same.
    regex = new RegExp(GRAMMAR[name].pattern, 'u')
    compiled.set(name, regex)
  }
  return regex
}

/** The regex part alone: what the schema checks. */
export function matchesPattern(name: GrammarName, value: string): boolean {
  const grammar: ValueGrammar = GRAMMAR[name]
  return (grammar.maxLength === undefined || value.length <= grammar.maxLength) && regexOf(name).test(value)
}

/** The whole grammar: the pattern, the length and any extra check. */
export function isValid(name: GrammarName, value: unknown): value is string {
  if (typeof value !== 'string' || !matchesPattern(name, value)) return false
  const grammar: ValueGrammar = GRAMMAR[name]
  return grammar.extra === undefined || grammar.extra(value)
}

/** The words for a schema pattern, when the pattern is one of the grammar's. */
export function wordsForPattern(pattern: string): string | undefined {
  const entries = Object.values(GRAMMAR) as ValueGrammar[]
  return entries.find((g) => g.pattern === pattern)?.words
}

// Values that are not in fleet.yaml but reach the same seeds: state node ids, secrets, sudo rules.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** A node id as the state and the agent know it: a definition node id, or a UUID of a provisioned node. */
export function isNodeIdOrUuid(value: unknown): value is string {
  return typeof value === 'string' && (UUID.test(value) || isValid('nodeId', value))
}

export function isHttpsUrl(value: unknown): value is string {
  return isValid('httpsUrl', value)
}
