// Rule: the canary is a declared node, so a new revision always has a host to prove it on.
import { pointer } from '../json-pointer.js'
import { type DefinitionRule, semanticError } from './rule.js'

export const canaryExists: DefinitionRule = ({ definition }) => {
  const canary = definition.canary
  if (canary === undefined || definition.nodes.some((node) => node.id === canary)) return []
  return [semanticError({
    code: 'CANARY_UNKNOWN',
    path: pointer('canary'),
    expected: 'the id of a node declared under nodes',
    actual: canary,
    message: `canary "${canary}" is not a declared node`,
  })]
}
