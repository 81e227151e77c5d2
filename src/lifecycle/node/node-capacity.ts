// A node's capacity from the fleet definition (maxCapacity, else its server type less the host
// reserve in policy/host-policy.yaml): what `node admit --definition` records before admitting.
import { FleetkitError } from '../../checks/fleetkit-error.js'
import { nodeCapacity } from '../../definition/capacity.js'
import { loadHostPolicy } from '../../definition/host-policy.js'
import { loadDefinition } from '../../definition/load.js'

export async function capacityFromDefinition(
  path: string,
  nodeId: string,
): Promise<{ cpu: number; memoryMib: number; diskGib: number }> {
  const definition = await loadDefinition(path)
  const node = definition.nodes.find((n) => n.id === nodeId)
  const capacity = node ? nodeCapacity(node, definition, loadHostPolicy()) : undefined
  if (!capacity) {
    throw new FleetkitError(
      'NODE_CAPACITY_UNKNOWN',
      `${path} gives no capacity for ${nodeId}: ${node ? 'no maxCapacity and no known serverType' : 'the node is not declared there'}`,
      {
        actions: [`declare maxCapacity for ${nodeId} in ${path}`, `fleetkit validate ${path}`],
        data: { nodeId, definition: path },
      },
    )
  }
  return { cpu: capacity.cpu, memoryMib: capacity.memoryMiB, diskGib: capacity.diskGiB }
}
