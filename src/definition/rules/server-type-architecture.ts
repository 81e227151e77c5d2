// Rule: a node's server type has its pool's CPU architecture: a pool runs one agent build and
// one image, so an arm64 node in an amd64 pool would get the wrong binaries.
import { findServerType } from '../host-policy.js'
import { pointer } from '../json-pointer.js'
import type { DefinitionError } from '../types.js'
import { type DefinitionRule, semanticError } from './rule.js'

export const serverTypeArchitectureMatchesPool: DefinitionRule = ({ definition, policy }) => {
  const errors: DefinitionError[] = []
  for (let index = 0; index < definition.nodes.length; index++) {
    const node = definition.nodes[index]!
    const poolType = definition.pools[node.pool]?.serverType
    if (node.serverType === undefined || poolType === undefined) continue
    const nodeSize = findServerType(policy, node.serverType)
    const poolSize = findServerType(policy, poolType)
    if (!nodeSize || !poolSize || nodeSize.architecture === poolSize.architecture) continue
    errors.push(
      semanticError({
        code: 'SERVER_TYPE_ARCHITECTURE_MISMATCH',
        path: pointer('nodes', index, 'serverType'),
        expected: `a server type of architecture ${poolSize.architecture} (pool "${node.pool}" uses ${poolType})`,
        actual: node.serverType,
        message: `node "${node.id}" server type "${node.serverType}" is ${nodeSize.architecture}, but pool "${node.pool}" is ${poolSize.architecture} (${poolType})`,
      }),
    )
  }
  return errors
}
