// Rule: a node that declares `container: true` names no serverType: a provider's server is a VM,
// which preflight would refuse as a container that is not one (HOST_CONTAINER_NOT_CONTAINER).
import { pointer } from '../json-pointer.js'
import { type DefinitionRule, semanticError } from './rule.js'

export const containerNotProvisioned: DefinitionRule = ({ definition }) =>
  definition.nodes.flatMap((node, index) =>
    node.container !== true || node.serverType === undefined
      ? []
      : [
          semanticError({
            code: 'NODE_CONTAINER_PROVISIONED',
            path: pointer('nodes', index, 'serverType'),
            expected: 'no serverType on a container node (a provider server is a VM)',
            actual: node.serverType,
            message: `node "${node.id}" declares container: true and serverType ${node.serverType}; a provider's server is a VM: drop container, or drop serverType and seed the container with fleetkit seed ${node.id} --kind worker`,
          }),
        ],
  )
