// Rule: a node's maxCapacity fits its server type (its own or its pool's): a node cannot offer
// its pool more cores, memory or disk than the machine has.
import { formatExcess } from '../capacity.js'
import { findServerType } from '../host-policy.js'
import { pointer } from '../json-pointer.js'
import type { DefinitionError } from '../types.js'
import { type DefinitionRule, semanticError } from './rule.js'

export const capacityWithinServerType: DefinitionRule = ({ definition, policy }) => {
  const errors: DefinitionError[] = []
  for (const [index, node] of definition.nodes.entries()) {
    const capacity = node.maxCapacity
    const typeName = node.serverType ?? definition.pools[node.pool]?.serverType
    const size = typeName === undefined ? undefined : findServerType(policy, typeName)
    if (!capacity || !size) continue
    const machine = { cpu: size.cores, memoryMiB: size.memoryMiB, diskGiB: size.diskGiB }
    const excess = formatExcess(capacity, machine)
    if (excess === '') continue
    errors.push(
      semanticError({
        code: 'NODE_CAPACITY_ABOVE_SERVER_TYPE',
        path: pointer('nodes', index, 'maxCapacity'),
        expected: machine,
        actual: capacity,
        message: `node "${node.id}" maxCapacity is above its server type "${typeName}": ${excess}`,
      }),
    )
  }
  return errors
}
