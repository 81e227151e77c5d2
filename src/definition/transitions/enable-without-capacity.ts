// Transition rule: a node going straight from disabled to active must bring capacity: a
// declared size, and room for it in its pool's budget beside the nodes already reserving.
import {
  addCapacity,
  dimensionsOver,
  formatCapacity,
  nodeCapacity,
  reservesCapacity,
  ZERO_CAPACITY,
} from '../capacity.js'
import { pointer } from '../json-pointer.js'
import type { DefinitionError } from '../types.js'
import { type TransitionRule, transitionError } from './transition-rule.js'

export const enabledNodesHaveCapacity: TransitionRule = async ({ previous, current, policy }) => {
  const wasDisabled = new Set(previous.nodes.filter((node) => node.state === 'disabled').map((node) => node.id))
  const errors: DefinitionError[] = []
  for (const [index, node] of current.nodes.entries()) {
    if (node.state !== 'active' || !wasDisabled.has(node.id)) continue
    const pool = current.pools[node.pool]
    if (!pool) continue
    const capacity = nodeCapacity(node, current, policy)
    const path = pointer('nodes', index, 'state')
    if (!capacity) {
      errors.push(
        transitionError({
          code: 'TRANSITION_ENABLE_WITHOUT_CAPACITY',
          path,
          expected: 'maxCapacity (or a known serverType) on a node that goes from disabled to active',
          actual: 'active, size unknown',
          message: `node "${node.id}" goes from disabled to active without a declared capacity`,
        }),
      )
      continue
    }
    let others = ZERO_CAPACITY
    current.nodes.forEach((other, otherIndex) => {
      if (otherIndex === index || other.pool !== node.pool || !reservesCapacity(other.state)) return
      const c = nodeCapacity(other, current, policy)
      if (c) others = addCapacity(others, c)
    })
    const over = dimensionsOver(addCapacity(others, capacity), pool.capacityBudget)
    if (over.length === 0) continue
    errors.push(
      transitionError({
        code: 'TRANSITION_ENABLE_WITHOUT_CAPACITY',
        path,
        expected: `room in pool "${node.pool}" budget ${formatCapacity(pool.capacityBudget)}`,
        actual: { node: capacity, alreadyReserved: others },
        message: `node "${node.id}" goes from disabled to active needing ${formatCapacity(capacity)}, but pool "${node.pool}" already reserves ${formatCapacity(others)} of ${formatCapacity(pool.capacityBudget)} (short in ${over.join(', ')})`,
      }),
    )
  }
  return errors
}
