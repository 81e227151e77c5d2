// Rule: active and drained nodes reserve their capacity against their pool's capacityBudget;
// disabled nodes reserve nothing. Over budget names the pool, the sum and the budget.
import {
  dimensionsOver,
  formatCapacity,
  formatExcess,
  nodeCapacity,
  poolReservations,
  reservesCapacity,
} from '../capacity.js'
import { pointer } from '../json-pointer.js'
import type { DefinitionError } from '../types.js'
import { type DefinitionRule, semanticError } from './rule.js'

export const capacityWithinBudget: DefinitionRule = ({ definition, policy }) => {
  const errors: DefinitionError[] = []
  for (let index = 0; index < definition.nodes.length; index++) {
    const node = definition.nodes[index]!
    // Without a size a node would reserve nothing and slip past the budget.
    if (!reservesCapacity(node.state) || nodeCapacity(node, definition, policy)) continue
    if ((node.serverType ?? definition.pools[node.pool]?.serverType) !== undefined) continue // SERVER_TYPE_UNKNOWN reports it
    if (!Object.hasOwn(definition.pools, node.pool)) continue // POOL_REFERENCE_UNKNOWN reports it
    errors.push(
      semanticError({
        code: 'NODE_CAPACITY_UNDECLARED',
        path: pointer('nodes', index),
        expected: 'maxCapacity, or a serverType on the node or its pool',
        actual: null,
        message: `${node.state} node "${node.id}" declares no maxCapacity and its pool "${node.pool}" no serverType: its reservation is unknown`,
      }),
    )
  }
  for (const [name, { reserved, reservingNodes }] of poolReservations(definition, policy)) {
    const budget = definition.pools[name]!.capacityBudget
    const over = dimensionsOver(reserved, budget)
    if (over.length === 0) continue
    errors.push(
      semanticError({
        code: 'POOL_CAPACITY_EXCEEDED',
        path: pointer('pools', name, 'capacityBudget'),
        expected: budget,
        actual: reserved,
        message: `pool "${name}": ${reservingNodes} active/drained nodes reserve ${formatCapacity(reserved)}, over its budget ${formatCapacity(budget)} (${formatExcess(reserved, budget)})`,
      }),
    )
  }
  return errors
}
