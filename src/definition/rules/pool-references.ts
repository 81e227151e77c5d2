// Rule: every node names a pool declared under `pools`. A pool the schema refused is still
// declared: a node naming it is not reported as unknown.
import { didYouMean } from '../did-you-mean.js'
import { pointer } from '../json-pointer.js'
import { type DefinitionRule, semanticError } from './rule.js'

export const poolReferencesExist: DefinitionRule = ({ definition, shapeInvalid }) => {
  if (shapeInvalid?.allPools) return []
  const pools = Object.keys(definition.pools)
  return definition.nodes.flatMap((node, index) =>
    Object.hasOwn(definition.pools, node.pool) || shapeInvalid?.pools.has(node.pool)
      ? []
      : [
          semanticError({
            code: 'POOL_REFERENCE_UNKNOWN',
            path: pointer('nodes', index, 'pool'),
            expected: pools,
            actual: node.pool,
            message: `node "${node.id}" names pool "${node.pool}", which is not declared${didYouMean(node.pool, pools)} (pools: ${pools.join(', ')})`,
          }),
        ],
  )
}
