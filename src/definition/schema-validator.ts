// Checks parsed fleet.yaml against schema/fleet.schema.json (ajv standalone, JSON Schema 2020-12,
// all errors) and turns each ajv error into a DefinitionError with a pointer, expected and actual.
import type { ErrorObject } from 'ajv'

import { validate as fleetValidator } from './fleet-validator.generated.js'
import { childPointer } from './json-pointer.js'
import type { DefinitionError } from './types.js'

// The validator is compiled ahead of time (generate-fleet-validator.ts): no ajv import and no
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
    const allowed = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {})
    return {
      code: 'DEFINITION_FIELD_UNKNOWN',
      check: 'definition:schema',
      path: childPointer(e.instancePath, field),
      expected: allowed.length > 0 ? `one of the fields ${allowed.join(', ')}` : 'no other field',
      actual: field,
      message: `unknown field "${field}"${closest(field, allowed)}${allowed.length > 0 ? ` (allowed: ${allowed.join(', ')})` : ''}`,
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
    actual: name === undefined ? summarize(e.data) : name,
    message: name === undefined ? `${e.message ?? 'is invalid'}` : `name "${name}" ${e.message ?? 'is invalid'}`,
  }
}

function expectedFor(e: ErrorObject): unknown {
  const params = e.params as Record<string, unknown>
  switch (e.keyword) {
    case 'type': return `a value of type ${String(params.type)}`
    case 'enum': return params.allowedValues
    case 'const': return params.allowedValue
    case 'pattern': return `a string matching ${String(params.pattern)}`
    case 'format': return `a ${String(params.format)}`
    case 'minimum': case 'maximum': case 'exclusiveMinimum': case 'exclusiveMaximum':
      return `${String(params.comparison)} ${String(params.limit)}`
    case 'minItems': return `at least ${String(params.limit)} items`
    case 'minProperties': return `at least ${String(params.limit)} entries`
    case 'uniqueItems': return 'no duplicate items'
    case 'minLength': case 'maxLength': return `${e.keyword === 'minLength' ? 'at least' : 'at most'} ${String(params.limit)} characters`
    default: return e.message ?? e.keyword
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

/** `; did you mean "x"?` for a typo within two edits of an allowed field, else nothing. */
function closest(field: string, allowed: string[]): string {
  let best: string | undefined
  let bestDistance = 3
  for (const candidate of allowed) {
    const d = editDistance(field.toLowerCase(), candidate.toLowerCase())
    if (d < bestDistance) [best, bestDistance] = [candidate, d]
  }
  return best === undefined ? '' : `; did you mean "${best}"?`
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}
