// Checks parsed fleet.yaml against schema/fleet.schema.json (ajv standalone, JSON Schema 2020-12,
// all errors) and turns each ajv error into a DefinitionError with a pointer, expected and actual.
import type { ErrorObject } from 'ajv'

import { didYouMean } from './did-you-mean.js'
import { validate as fleetValidator } from './fleet-validator.generated.js'
import { wordsForPattern } from './grammar.js'
import { childPointer } from './json-pointer.js'
import type { DefinitionError } from './types.js'

// The validator is compiled ahead of time (scripts/generate-fleet-validator.ts): no ajv import and no
// schema compile when `fleetkit validate` starts.
type StandaloneValidate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null }

export function checkSchema(data: unknown): DefinitionError[] {
  const validate = fleetValidator as StandaloneValidate
  if (validate(data)) return []
  const seen = new Set<string>()
  const errors: DefinitionError[] = []
  for (const e of validate.errors ?? []) {
    const mapped = mapAjvError(e)
    if (!mapped) continue
    const key = `${mapped.code} ${mapped.path}`
    if (seen.has(key)) continue
    seen.add(key)
    errors.push(mapped)
  }
  return errors
}

function mapAjvError(e: ErrorObject): DefinitionError | undefined {
  const params = e.params as Record<string, unknown>
  if (e.keyword === 'additionalProperties') {
    const field = String(params.additionalProperty)
    // A key is the file's text: cut like any value shown (a million-character key was a 2 MB error line).
    const shown = summarize(field) as string
    const allowed = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {})
    return {
      code: 'DEFINITION_FIELD_UNKNOWN',
      check: 'definition:schema',
      path: childPointer(e.instancePath, field),
      expected: allowed.length > 0 ? `one of the fields ${allowed.join(', ')}` : 'no other field',
      actual: shown,
      message: `unknown field "${shown}"${didYouMean(field, allowed)}${allowed.length > 0 ? ` (allowed: ${allowed.join(', ')})` : ''}`,
    }
  }
  if (e.keyword === 'required') {
    const field = String(params.missingProperty)
    return {
      code: 'DEFINITION_FIELD_MISSING',
      check: 'definition:schema',
      path: childPointer(e.instancePath, field),
      expected: `the field "${field}"`,
      actual: null,
      message: `missing required field "${field}"`,
    }
  }
  // propertyNames reports the name once under the inner keyword and once as itself: keep the inner one.
  if (e.keyword === 'propertyNames') return undefined
  // An error about a mapping key (pool names) carries the key in propertyName.
  const name = e.propertyName ?? (params.propertyName as string | undefined)
  return {
    code: 'DEFINITION_VALUE_INVALID',
    check: 'definition:schema',
    path: name === undefined ? e.instancePath : childPointer(e.instancePath, name),
    expected: expectedFor(e),
    actual: name === undefined ? summarize(e.data) : summarize(name),
    message: name === undefined ? messageFor(e) : `name "${String(summarize(name))}" ${messageFor(e)}`,
  }
}

/** What is expected, in words: the allowed values of an enum, "an https:// URL" rather than a regex. */
function messageFor(e: ErrorObject): string {
  const params = e.params as Record<string, unknown>
  switch (e.keyword) {
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
    case 'const':
      return `must be ${JSON.stringify(params.allowedValue)}`
    case 'pattern':
      return `must be ${wordsForPattern(String(params.pattern)) ?? `a string matching ${String(params.pattern)}`}`
    case 'type':
      return `must be ${withArticle(String(params.type))}`
    default:
      return e.message ?? 'is invalid'
  }
}

function withArticle(type: string): string {
  const words: Record<string, string> = {
    string: 'a string',
    number: 'a number',
    integer: 'an integer',
    boolean: 'true or false',
    object: 'a mapping',
    array: 'a list',
    null: 'null',
  }
  return type
    .split(',')
    .map((t) => words[t] ?? t)
    .join(' or ')
}

function expectedFor(e: ErrorObject): unknown {
  const params = e.params as Record<string, unknown>
  switch (e.keyword) {
    case 'type':
      return `a value of type ${String(params.type)}`
    case 'enum':
      return params.allowedValues
    case 'const':
      return params.allowedValue
    case 'pattern':
      return wordsForPattern(String(params.pattern)) ?? `a string matching ${String(params.pattern)}`
    case 'format':
      return `a ${String(params.format)}`
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${String(params.comparison)} ${String(params.limit)}`
    case 'minItems':
      return `at least ${String(params.limit)} items`
    case 'minProperties':
      return `at least ${String(params.limit)} entries`
    case 'uniqueItems':
      return 'no duplicate items'
    case 'minLength':
    case 'maxLength':
      return `${e.keyword === 'minLength' ? 'at least' : 'at most'} ${String(params.limit)} characters`
    default:
      return e.message ?? e.keyword
  }
}

/** Scalars as they are (long strings cut); objects and arrays only by their kind, so no nested value leaks. */
export function summarize(value: unknown): unknown {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value
  if (typeof value === 'string') return value.length > 120 ? `${value.slice(0, 117)}...` : value
  if (Array.isArray(value)) return `an array of ${value.length} items`
  if (typeof value === 'object') return 'an object'
  return String(value)
}
