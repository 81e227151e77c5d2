// Rule: no secret anywhere in the file (values and keys): private keys, tokens, credentials,
// .env payloads. Errors carry the path and the kind only; the value never leaves this module.
import { childPointer, escapeSegment } from '../json-pointer.js'
import { detectSecret, type SecretKind } from '../secret-patterns.js'
import type { DefinitionError } from '../types.js'
import { semanticError } from './rule.js'

export const REDACTED = '[redacted]'

export interface SecretFinding {
  path: string
  kind: SecretKind
  /** True when a mapping key (not a value) is the secret; the path then ends in REDACTED. */
  inKey: boolean
}

/** A value met on the walk: its pointer is built from the parent chain only when it holds a secret. */
interface Visit {
  value: unknown
  parent: Visit | undefined
  /** The key or index under the parent, unescaped. */
  key: string
}

function pathOf(visit: Visit | undefined): string {
  const keys: string[] = []
  for (let at = visit; at?.parent !== undefined; at = at.parent) keys.push(at.key)
  return keys.reverse().reduce((path, key) => `${path}/${escapeSegment(key)}`, '')
}

/** Every string value and key of parsed data that looks like a secret. Works on any data, schema-valid or not. */
export function findSecrets(data: unknown): SecretFinding[] {
  const found: SecretFinding[] = []
  const stack: Visit[] = [{ value: data, parent: undefined, key: '' }]
  while (stack.length > 0) {
    const visit = stack.pop()!
    const value = visit.value
    if (typeof value === 'string') {
      const kind = detectSecret(value)
      if (kind) found.push({ path: pathOf(visit), kind, inKey: false })
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], parent: visit, key: String(i) })
    } else if (value !== null && typeof value === 'object') {
      // An index loop: this runs cold on every key, where for...of's iterator protocol costs most.
      const keys = Object.keys(value)
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!
        const keyKind = detectSecret(key)
        if (keyKind) {
          found.push({ path: childPointer(pathOf(visit), REDACTED), kind: keyKind, inKey: true })
          continue
        }
        stack.push({ value: (value as Record<string, unknown>)[key], parent: visit, key })
      }
    }
  }
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

export function secretErrors(findings: SecretFinding[]): DefinitionError[] {
  return findings.map(({ path, kind, inKey }) =>
    semanticError({
      code: 'DEFINITION_SECRET_FOUND',
      path,
      expected:
        'no secret: keep keys and tokens on the operator host or in the state, and reference them (tokenEnv, caFile)',
      actual: `${kind}${inKey ? ' as a key' : ''} (value withheld)`,
      message: `${inKey ? 'a key' : 'the value'} at ${path || '/'} looks like ${withArticle(kind)}; remove it from the definition and rotate it, it may be in Git history`,
    }),
  )
}

/** "an openssh-private-key", "a jwt": for messages that name a kind. */
export function withArticle(kind: SecretKind): string {
  return `${/^[aeio]/.test(kind) ? 'an' : 'a'} ${kind}`
}
