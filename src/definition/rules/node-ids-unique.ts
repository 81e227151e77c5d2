// Rule: every node id is declared once. A second node with the same id is an error
// pointing at the later declaration and naming the first.
import { pointer } from '../json-pointer.js'
import { type DefinitionRule, semanticError } from './rule.js'

export const nodeIdsUnique: DefinitionRule = ({ definition }) => {
  const firstIndex = new Map<string, number>()
  const errors = []
  for (let index = 0; index < definition.nodes.length; index++) {
    const node = definition.nodes[index]!
    const first = firstIndex.get(node.id)
    if (first === undefined) {
      firstIndex.set(node.id, index)
      continue
    }
    errors.push(
      semanticError({
        code: 'NODE_ID_DUPLICATE',
        path: pointer('nodes', index, 'id'),
        expected: 'an id no other node uses',
        actual: node.id,
        message: `node id "${node.id}" is already declared at ${pointer('nodes', first)}`,
      }),
    )
  }
  return errors
}
