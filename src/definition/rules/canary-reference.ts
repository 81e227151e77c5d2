// Rule: the canary is a declared node, so a new revision always has a host to prove it on.
import { didYouMean } from '../did-you-mean.js'
import { pointer } from '../json-pointer.js'
import { type DefinitionRule, semanticError } from './rule.js'

export const canaryExists: DefinitionRule = ({ definition, shapeInvalid }) => {
  const canary = definition.canary
  if (canary === undefined || definition.nodes.some((node) => node.id === canary)) return []
  // A node the schema refused still declares its id.
  if (shapeInvalid?.allNodes || shapeInvalid?.nodeIds.has(canary)) return []
  const ids = definition.nodes.map((node) => node.id)
  return [
    semanticError({
      code: 'CANARY_UNKNOWN',
      path: pointer('canary'),
      expected: 'the id of a node declared under nodes',
      actual: canary,
      message: `canary "${canary}" is not a declared node${didYouMean(canary, ids)}`,
    }),
  ]
}
