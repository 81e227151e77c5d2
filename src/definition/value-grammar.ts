// The grammar pass after the schema: every value the schema's pattern admits also meets the rest
// of its grammar (a URL that parses, a key blob of its own type, an IPv6 address), so what validate accepts renders.
import { GRAMMAR, type GrammarName, matchesPattern, type ValueGrammar } from './grammar.js'
import { escapeSegment } from './json-pointer.js'
import type { DefinitionError } from './types.js'

/**
 * Where each grammar applies in fleet.yaml: `*` is any array index or mapping key, `#` a mapping
 * key itself. A unit test holds this table equal to the `grammar:` tags in schema/fleet.schema.json.
 */
export const GRAMMAR_FIELDS: ReadonlyArray<readonly [string, GrammarName]> = [
  ['/fleet', 'dnsLabel'],
  ['/gateway/url', 'httpsUrl'],
  ['/gateway/enrollUrl', 'httpsUrl'],
  ['/gateway/replicas/*/url', 'httpsUrl'],
  ['/gateway/replicas/*/enrollUrl', 'httpsUrl'],
  ['/release/url', 'httpsUrl'],
  ['/release/publicKey', 'releasePublicKey'],
  ['/release/version', 'releaseVersion'],
  ['/release/caFile', 'filePath'],
  ['/operators/cidrs/*', 'cidr'],
  ['/operators/sshKeys/*', 'sshPublicKey'],
  ['/providers/hetzner/tokenEnv', 'envName'],
  ['/providers/hetzner/sshKeys/*', 'keyName'],
  ['/providers/hetzner/endpoint', 'endpointUrl'],
  ['/pools/#', 'dnsLabel'],
  ['/pools/*/role', 'dnsLabel'],
  ['/pools/*/serverType', 'providerName'],
  ['/pools/*/image', 'imageName'],
  ['/pools/*/regions/*', 'providerName'],
  ['/pools/*/features/preset', 'imageName'],
  ['/nodes/*/id', 'nodeId'],
  ['/nodes/*/pool', 'dnsLabel'],
  ['/nodes/*/ssh/host', 'sshHost'],
  ['/nodes/*/ssh/user', 'posixUser'],
  ['/nodes/*/hostKey', 'sshPublicKey'],
  ['/nodes/*/agentVersion', 'releaseVersion'],
  ['/nodes/*/features/preset', 'imageName'],
  ['/nodes/*/dataVolume/device', 'device'],
  ['/nodes/*/dataVolume/mountPoint', 'mountPoint'],
  ['/nodes/*/region', 'providerName'],
  ['/nodes/*/serverType', 'providerName'],
  ['/canary', 'nodeId'],
  ['/features/preset', 'imageName'],
]

/** Each string at `glob` in `data`, with its pointer. */
function valuesAt(data: unknown, glob: string): Array<[string, string]> {
  let current: Array<[unknown, string]> = [[data, '']]
  for (const segment of glob.slice(1).split('/')) {
    const next: Array<[unknown, string]> = []
    for (const [value, path] of current) {
      if (value === null || typeof value !== 'object') continue
      const entries: Array<[string, unknown]> = Array.isArray(value)
        ? value.map((v, i) => [String(i), v])
        : Object.entries(value)
      if (segment === '#') for (const [key] of entries) next.push([key, `${path}/${escapeSegment(key)}`])
      else if (segment === '*') for (const [key, child] of entries) next.push([child, `${path}/${escapeSegment(key)}`])
      else if (!Array.isArray(value) && Object.hasOwn(value, segment))
        next.push([(value as Record<string, unknown>)[segment], `${path}/${escapeSegment(segment)}`])
    }
    current = next
  }
  return current.filter((entry): entry is [string, string] => typeof entry[0] === 'string')
}

/** The grammars with a check beyond their pattern, and where they apply: all this pass looks at. */
const EXTRA_FIELDS = GRAMMAR_FIELDS.filter(([, name]) => (GRAMMAR[name] as ValueGrammar).extra !== undefined)

/** Values whose pattern passes (the schema said nothing) but whose grammar's extra check fails. */
export function checkValueGrammar(data: unknown): DefinitionError[] {
  const errors: DefinitionError[] = []
  for (const [glob, name] of EXTRA_FIELDS) {
    const grammar: ValueGrammar = GRAMMAR[name]
    for (const [value, path] of valuesAt(data, glob)) {
      if (!matchesPattern(name, value) || grammar.extra!(value)) continue
      errors.push({
        code: 'DEFINITION_VALUE_INVALID',
        check: 'definition:schema',
        path,
        expected: grammar.words,
        actual: value.length > 120 ? `${value.slice(0, 117)}...` : value,
        message: `must be ${grammar.words}`,
      })
    }
  }
  return errors
}
