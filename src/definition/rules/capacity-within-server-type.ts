// Rule: a node's maxCapacity fits what its server type (its own or its pool's) offers: the machine
// less the host reserve, as provisioning records it, so `node admit` never offers jobs the reserve.
import { dimensionsOver, nodeServerType, serverTypeOffer } from '../capacity.js'
import type { HostPolicy, ServerTypeSize } from '../host-policy.js'
import { pointer } from '../json-pointer.js'
import type { Capacity, DefinitionError } from '../types.js'
import { type DefinitionRule, semanticError } from './rule.js'

/** Per dimension over: `cpu 4 > 3.5 (cx32: 4 cores less 0.5 kept by the host reserve)`. */
function formatOverOffer(
  capacity: Capacity,
  offer: Capacity,
  typeName: string,
  size: ServerTypeSize,
  policy: HostPolicy,
) {
  const machine: Record<keyof Capacity, string> = {
    cpu: `${size.cores} cores less ${policy.reserve.cpu}`,
    memoryMiB: `${size.memoryMiB} MiB less ${policy.reserve.memoryMiB}`,
    diskGiB: `${size.diskGiB} GiB less ${policy.reserve.diskGiB}`,
  }
  return dimensionsOver(capacity, offer)
    .map((d) => `${d} ${capacity[d]} > ${offer[d]} (${typeName}: ${machine[d]} kept by the host reserve)`)
    .join(', ')
}

export const capacityWithinServerType: DefinitionRule = ({ definition, policy }) => {
  const errors: DefinitionError[] = []
  for (let index = 0; index < definition.nodes.length; index++) {
    const node = definition.nodes[index]!
    const capacity = node.maxCapacity
    const type = nodeServerType(node, definition, policy)
    if (!capacity || !type) continue
    const offer = serverTypeOffer(type.size, policy)
    // Words only for a node over its offer: a valid fleet builds none.
    if (dimensionsOver(capacity, offer).length === 0) continue
    const excess = formatOverOffer(capacity, offer, type.name, type.size, policy)
    if (excess === '') continue
    errors.push(
      semanticError({
        code: 'NODE_CAPACITY_ABOVE_SERVER_TYPE',
        path: pointer('nodes', index, 'maxCapacity'),
        expected: offer,
        actual: capacity,
        message: `node "${node.id}" maxCapacity is above what its server type "${type.name}" offers after the host reserve: ${excess}`,
      }),
    )
  }
  return errors
}
