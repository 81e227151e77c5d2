// Rule: every serverType (pool default or node pin) is in the host policy's server-type
// catalog, so it can be sized and provisioned.
import { didYouMean } from '../did-you-mean.js'
import { findServerType } from '../host-policy.js'
import { pointer } from '../json-pointer.js'
import type { DefinitionError } from '../types.js'
import { type DefinitionRule, semanticError } from './rule.js'

export const serverTypesKnown: DefinitionRule = ({ definition, policy }) => {
  const known = Object.values(policy.serverTypes).flatMap((types) => Object.keys(types))
  const errors: DefinitionError[] = []
  // The path is built only for an error: a fleet has thousands of nodes and most pin no type.
  const check = (path: () => string, owner: string, typeName: string | undefined) => {
    if (typeName === undefined || findServerType(policy, typeName)) return
    errors.push(
      semanticError({
        code: 'SERVER_TYPE_UNKNOWN',
        path: path(),
        expected: known,
        actual: typeName,
        message: `${owner} server type "${typeName}" is not in policy/host-policy.yaml serverTypes${didYouMean(typeName, known)}`,
      }),
    )
  }
  for (const [name, pool] of Object.entries(definition.pools))
    check(() => pointer('pools', name, 'serverType'), `pool "${name}"`, pool.serverType)
  for (let index = 0; index < definition.nodes.length; index++) {
    const node = definition.nodes[index]!
    if (node.serverType !== undefined)
      check(() => pointer('nodes', index, 'serverType'), `node "${node.id}"`, node.serverType)
  }
  return errors
}
