// Rule: a node's region is one of its pool's regions, when the pool lists them: the pool's
// regions are where its hosts are placed, and a stray node would escape that placement.
import { didYouMean } from '../did-you-mean.js'
import { pointer } from '../json-pointer.js'
import type { DefinitionError } from '../types.js'
import { type DefinitionRule, semanticError } from './rule.js'

export const regionWithinPool: DefinitionRule = ({ definition }) => {
  const errors: DefinitionError[] = []
  for (let index = 0; index < definition.nodes.length; index++) {
    const node = definition.nodes[index]!
    const regions = definition.pools[node.pool]?.regions
    if (node.region === undefined || regions === undefined || regions.includes(node.region)) continue
    errors.push(
      semanticError({
        code: 'NODE_REGION_OUTSIDE_POOL',
        path: pointer('nodes', index, 'region'),
        expected: regions,
        actual: node.region,
        message: `node "${node.id}" region "${node.region}" is not one of pool "${node.pool}" regions (${regions.join(', ')})${didYouMean(node.region, regions)}`,
      }),
    )
  }
  return errors
}
