// The grammar pass after the schema: every value the schema's pattern admits also meets the rest
// of its grammar (a URL that parses, a key blob of its own type, an IPv6 address), so what validate accepts renders.
import { GRAMMAR, type GrammarName, matchesPattern, type ValueGrammar } from './grammar.js'
import { pointer } from './json-pointer.js'
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

/**
 * Calls `visit` with each string at `segments` (a glob split at "/") in `data` and the keys that lead
 * to it. Depth first, in the data's order. The keys array is reused: `visit` turns it into a pointer
 * only for a value it reports, so a valid fleet of thousands of nodes builds no pointer at all.
 */
function forEachStringAt(
  data: unknown,
  segments: readonly string[],
  visit: (value: string, keys: readonly string[]) => void,
): void {
  const keys: string[] = []
  const walk = (value: unknown, depth: number): void => {
    if (depth === segments.length) {
      if (typeof value === 'string') visit(value, keys)
      return
    }
    if (value === null || typeof value !== 'object') return
    const segment = segments[depth]!
    const last = depth === segments.length - 1
    if (segment === '#' || segment === '*') {
      // A mapping key is a string itself: `#` checks it, and only as the glob's last segment.
      if (segment === '#' && !last) return
      const list = Array.isArray(value) ? (value as unknown[]) : undefined
      const names = list ? undefined : Object.keys(value)
      const count = list ? list.length : names!.length
      for (let i = 0; i < count; i++) {
        const key = list ? String(i) : names![i]!
        keys.push(key)
        if (segment === '#') visit(key, keys)
        else walk(list ? list[i] : (value as Record<string, unknown>)[key], depth + 1)
        keys.pop()
      }
    } else if (!Array.isArray(value) && Object.hasOwn(value, segment)) {
      keys.push(segment)
      walk((value as Record<string, unknown>)[segment], depth + 1)
      keys.pop()
    }
  }
  walk(data, 0)
}

/** The grammars with a check beyond their pattern, and where they apply (split): all this pass looks at. */
const EXTRA_FIELDS = GRAMMAR_FIELDS.filter(([, name]) => (GRAMMAR[name] as ValueGrammar).extra !== undefined).map(
  ([glob, name]) => [glob.slice(1).split('/'), name] as const,
)

/** Values whose pattern passes (the schema said nothing) but whose grammar's extra check fails. */
export function checkValueGrammar(data: unknown): DefinitionError[] {
  const errors: DefinitionError[] = []
  for (const [segments, name] of EXTRA_FIELDS) {
    const grammar: ValueGrammar = GRAMMAR[name]
    forEachStringAt(data, segments, (value, keys) => {
      if (!matchesPattern(name, value) || grammar.extra!(value)) return
      errors.push({
        code: 'DEFINITION_VALUE_INVALID',
        check: 'definition:schema',
        path: pointer(...keys),
        expected: grammar.words,
        actual: value.length > 120 ? `${value.slice(0, 117)}...` : value,
        message: `must be ${grammar.words}`,
      })
    })
  }
  return errors
}
