// Rule: every node names a pool declared under `pools`.
import { pointer } from '../json-pointer.js'
import { type DefinitionRule, semanticError } from './rule.js'

export const poolReferencesExist: DefinitionRule = ({ definition }) => {
  const pools = Object.keys(definition.pools)
  return definition.nodes.flatMap((node, index) =>
    Object.hasOwn(definition.pools, node.pool)
      ? []
      : [semanticError({
          code: 'POOL_REFERENCE_UNKNOWN',
          path: pointer('nodes', index, 'pool'),
          expected: pools,
          actual: node.pool,
          message: `node "${node.id}" names pool "${node.pool}", which is not declared (pools: ${pools.join(', ')})`,
        })],
  )
}
