// Transition rule: a pool budget may shrink only to what its nodes still reserve. Besides the
// active and drained nodes of the new file, a node disabled or removed in this change keeps its
// reservation while it still holds allocations or leases: an edit cannot free capacity in use.
import {
  addCapacity,
  dimensionsOver,
  formatCapacity,
  nodeCapacity,
  poolReservations,
  reservesCapacity,
} from '../capacity.js'
import { pointer } from '../json-pointer.js'
import type { DefinitionError } from '../types.js'
import { nodeHoldings, type TransitionRule, transitionError } from './transition-rule.js'

export const budgetCoversReservations: TransitionRule = async ({ previous, current, facts, policy }) => {
  const errors: DefinitionError[] = []
  const reservations = poolReservations(current, policy)
  const currentById = new Map(current.nodes.map((node) => [node.id, node]))
  for (const [name, pool] of Object.entries(current.pools)) {
    const before = previous.pools[name]
    if (!before || dimensionsOver(before.capacityBudget, pool.capacityBudget).length === 0) continue
    let reserved = reservations.get(name)?.reserved
    if (!reserved) continue
    // Over budget already in the new file: POOL_CAPACITY_EXCEEDED says so.
    if (dimensionsOver(reserved, pool.capacityBudget).length > 0) continue
    const stillHolding: string[] = []
    for (const node of previous.nodes) {
      if (node.pool !== name || !reservesCapacity(node.state)) continue
      const now = currentById.get(node.id)
      if (now && now.pool === name && reservesCapacity(now.state)) continue // counted in `reserved` already
      const { allocations, leases } = await nodeHoldings(facts, node.id)
      const capacity = nodeCapacity(node, previous, policy)
      if (allocations + leases === 0 || !capacity) continue
      reserved = addCapacity(reserved, capacity)
      stillHolding.push(node.id)
    }
    const over = dimensionsOver(reserved, pool.capacityBudget)
    if (over.length === 0) continue
    errors.push(
      transitionError({
        code: 'TRANSITION_BUDGET_SHRINK_UNSAFE',
        path: pointer('pools', name, 'capacityBudget'),
        expected: reserved,
        actual: pool.capacityBudget,
        message: `pool "${name}" budget shrinks to ${formatCapacity(pool.capacityBudget)} but its nodes still reserve ${formatCapacity(reserved)} (still in use: ${stillHolding.join(', ')}); shrink after they are empty`,
      }),
    )
  }
  return errors
}
