// What a semantic rule is: a pure function from a schema-valid definition (and the host
// policy) to the errors it finds. Each rule lives in its own module with its own codes.
// Rules run once per process on thousands of nodes, mostly before the JIT has optimised them: they
// walk nodes with index loops (a cold `for (const [i, node] of nodes.entries())` allocates a pair and
// runs the iterator protocol per node, about three times slower) and build an error's pointer and
// words only when they report it.
import type { DefinitionCode } from '../../checks/codes/definition.js'
import type { HostPolicy } from '../host-policy.js'
import type { ShapeInvalidNames } from '../shape-valid-part.js'
import type { Definition, DefinitionError } from '../types.js'

export interface RuleContext {
  /** The definition, or only its shape-valid part when the schema found errors. */
  definition: Definition
  policy: HostPolicy
  /** Set when `definition` is a part: names declared in entries the schema refused. */
  shapeInvalid?: ShapeInvalidNames
}

export type DefinitionRule = (context: RuleContext) => DefinitionError[]

export interface SemanticErrorFields {
  code: DefinitionCode
  path: string
  expected: unknown
  actual: unknown
  message: string
}

export function semanticError(fields: SemanticErrorFields): DefinitionError {
  return { ...fields, check: 'definition:semantics' }
}
