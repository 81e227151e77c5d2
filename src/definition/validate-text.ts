// validateDefinitionText: text in, every error out (parse, secrets, schema, semantic rules),
// each with a pointer and, where it resolves, a line and column. No I/O besides the policy file.
import { complexityProblem, sizeProblem } from './complexity.js'
import { loadHostPolicy, type HostPolicy } from './host-policy.js'
import { escapeSegment, isWithin } from './json-pointer.js'
import { parseDefinitionText } from './parse-text.js'
import { checkSemantics } from './rules/index.js'
import { findSecrets, REDACTED, secretErrors, type SecretFinding, withArticle } from './rules/secrets.js'
import { checkSchema } from './schema-validator.js'
import { scanTextForSecrets } from './secret-patterns.js'
import { restoreNodeIndexes, shapeValidPart } from './shape-valid-part.js'
import { sourcePositions } from './source-positions.js'
import type { Definition, DefinitionError } from './types.js'
import { checkValueGrammar } from './value-grammar.js'

export interface ValidateDefinitionOptions {
  /** The host policy; policy/host-policy.yaml when absent. */
  policy?: HostPolicy
  /** Stop after the schema and the secret scan (used for an older revision in --since). */
  schemaOnly?: boolean
}

export interface DefinitionTextResult {
  /** Present when the text matched the schema; the definition is valid only when `errors` is empty. */
  definition?: Definition
  errors: DefinitionError[]
}

export function validateDefinitionText(
  text: string,
  sourceName: string,
  options: ValidateDefinitionOptions = {},
): DefinitionTextResult {
  const tooLarge = sizeProblem(text.length)
  if (tooLarge !== undefined) return { errors: [tooComplex(tooLarge)] }
  const parsed = parseDefinitionText(text, sourceName)
  if (!parsed.ok && parsed.failure.tooComplex) return { errors: [tooComplex(parsed.failure.reason)] }
  if (!parsed.ok) {
    const { reason, line, column } = parsed.failure
    const where = line === undefined ? '' : ` at line ${line}, column ${column}`
    const unreadable: DefinitionError = {
      code: 'DEFINITION_UNREADABLE',
      check: 'definition:schema',
      path: '',
      expected: 'well-formed YAML or JSON',
      actual: null,
      message: `${reason}${where}`,
      ...(line === undefined ? {} : { line, column }),
    }
    // The file may not parse because a key was pasted into it: say so, by line, without the key.
    const secrets = scanTextForSecrets(text).map(({ line: secretLine, kind }) => ({
      ...secretErrors([{ path: '', kind, inKey: false }])[0]!,
      message: `line ${secretLine} looks like ${withArticle(kind)}; remove it from the definition and rotate it, it may be in Git history`,
      line: secretLine,
      column: 1,
    }))
    return { errors: [unreadable, ...secrets] }
  }
  const data = parsed.data
  // Before anything walks the data: an alias bomb is small as text and huge as a tree.
  const complex = complexityProblem(data)
  if (complex !== undefined) return { errors: [tooComplex(complex)] }
  const foreign = notADefinition(data)
  if (foreign !== undefined) return { errors: [foreign] }
  const merge = mergeKeyPath(data)
  if (merge !== undefined) {
    const position = sourcePositions(text)(merge, { key: true })
    return {
      errors: [{ ...mergeKeyError(merge), ...(position ? { line: position.line, column: position.column } : {}) }],
    }
  }
  const secrets = findSecrets(data)
  const shapeErrors = [...checkSchema(data), ...checkValueGrammar(data)]
  const errors = [...shapeErrors, ...secretErrors(secrets)]
  let definition: Definition | undefined
  if (shapeErrors.length === 0) definition = normalize(data as Definition)
  if (!options.schemaOnly) {
    // The rules also run on every part whose shape is valid, so a typo does not hide other mistakes.
    const part = definition
      ? { definition, invalid: undefined, nodeIndex: undefined }
      : shapeValidPart(data, shapeErrors)
    if (part) {
      const policy = options.policy ?? loadHostPolicy()
      const found = checkSemantics({
        definition: part.definition,
        policy,
        ...(part.invalid ? { shapeInvalid: part.invalid } : {}),
      })
      errors.push(...(part.nodeIndex ? restoreNodeIndexes(found, part.nodeIndex) : found))
    }
  }
  if (errors.length > 0) locate(errors, text)
  return { ...(definition === undefined ? {} : { definition }), errors: redact(errors, secrets, data) }
}

function tooComplex(reason: string): DefinitionError {
  return {
    code: 'DEFINITION_TOO_COMPLEX',
    check: 'definition:schema',
    path: '',
    expected: 'a fleet definition of ordinary size, nesting and aliases',
    actual: null,
    message: `the file is refused unread: ${reason}`,
  }
}

/**
 * A mapping with neither `version` nor `fleet` at its top is not a fleet definition: a wrong path, or a
 * `fleet.yaml` committed as a symbolic link to /etc/shadow. Its keys would each be an unknown field, echoing
 * the file's lines into a CI log (a password hash among them), so it is one error that shows none of them.
 * A definition with a typo still has one of the two, and gets every error as before.
 */
function notADefinition(data: unknown): DefinitionError | undefined {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined
  if (Object.hasOwn(data, 'version') || Object.hasOwn(data, 'fleet')) return undefined
  const keys = Object.keys(data).length
  return {
    code: 'DEFINITION_VALUE_INVALID',
    check: 'definition:schema',
    path: '',
    expected: 'a fleet definition: a mapping with version, fleet and the other required fields',
    actual: `a mapping of ${keys} key${keys === 1 ? '' : 's'}, none of them version or fleet`,
    message:
      'this is not a fleet definition: it has neither "version" nor "fleet" at the top level (its keys are not shown; check the path, and where a symbolic link points)',
    line: 1,
    column: 1,
  }
}

/**
 * The pointer of the first `<<` key. js-yaml reads YAML 1.2's core schema, which has no merge keys: `<<: *defaults`
 * is an ordinary key there, so the mapping would lack every field it meant to merge and carry an unknown `<<`.
 * Walked only after complexity.ts bounded the data; a shared (aliased) mapping is looked at once.
 */
function mergeKeyPath(data: unknown): string | undefined {
  const seen = new Set<object>()
  const stack: { value: unknown; path: string }[] = [{ value: data, path: '' }]
  while (stack.length > 0) {
    const { value, path } = stack.pop()!
    if (value === null || typeof value !== 'object' || seen.has(value)) continue
    seen.add(value)
    if (!Array.isArray(value) && Object.hasOwn(value, '<<')) return `${path}/<<`
    for (const [key, child] of Object.entries(value))
      stack.push({ value: child, path: `${path}/${escapeSegment(key)}` })
  }
  return undefined
}

function mergeKeyError(path: string): DefinitionError {
  return {
    code: 'DEFINITION_UNREADABLE',
    check: 'definition:schema',
    path,
    expected: 'the fields written out in each mapping',
    actual: null,
    message:
      'YAML merge keys (<<) are not supported: write the fields out in the mapping (an alias may still stand for a whole value, such as a list)',
  }
}

function normalize(data: Definition): Definition {
  return data.nodes === undefined ? { ...data, nodes: [] } : data
}

/** Add line and column from the source. Built only now: it is the slow parse. */
function locate(errors: DefinitionError[], text: string): void {
  const positionOf = sourcePositions(text)
  for (const e of errors) {
    if (e.line !== undefined) continue
    let position
    if (e.code === 'DEFINITION_FIELD_MISSING') position = positionOf(e.path.slice(0, e.path.lastIndexOf('/')))
    else if (e.code === 'DEFINITION_FIELD_UNKNOWN') position = positionOf(e.path, { key: true })
    else position = positionOf(e.path)
    if (position) {
      e.line = position.line
      e.column = position.column
    }
  }
}

/**
 * The last guard before output: an error about a value that is a secret shows no value,
 * and a secret used as a key is cut out of paths and messages.
 */
function redact(errors: DefinitionError[], secrets: SecretFinding[], data: unknown): DefinitionError[] {
  if (secrets.length === 0) return errors
  const valuePaths = secrets.filter((s) => !s.inKey).map((s) => s.path)
  const keys = secrets.some((s) => s.inKey) ? secretKeysOf(data) : []
  return errors.map((e) => {
    if (e.code === 'DEFINITION_SECRET_FOUND') return e
    let { path, message, actual, expected } = e
    if (valuePaths.some((p) => isWithin(path, p))) actual = REDACTED
    for (const key of keys) {
      path = path.split(`/${escapeSegment(key)}`).join(`/${REDACTED}`)
      message = message.split(key).join(REDACTED)
      if (actual === key) actual = REDACTED
      if (typeof expected === 'string') expected = expected.split(key).join(REDACTED)
    }
    return { ...e, path, message, actual, expected }
  })
}

function secretKeysOf(data: unknown): string[] {
  const keys = findSecretKeys(data)
  return [...new Set(keys)]
}

function findSecretKeys(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(findSecretKeys)
  if (value === null || typeof value !== 'object') return []
  return Object.entries(value).flatMap(([key, child]) =>
    findSecrets({ [key]: null }).length > 0 ? [key] : findSecretKeys(child),
  )
}
