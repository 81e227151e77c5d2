// Transition rule: a node removed from the file must not hold allocations or live leases;
// drain it (state: drained) and remove it once it is empty.
import { pointer } from '../json-pointer.js'
import type { DefinitionError } from '../types.js'
import { nodeHoldings, type TransitionRule, transitionError } from './transition-rule.js'

export const removedNodesAreEmpty: TransitionRule = async ({ previous, current, facts }) => {
  const kept = new Set(current.nodes.map((node) => node.id))
  const errors: DefinitionError[] = []
  for (const node of previous.nodes) {
    if (kept.has(node.id)) continue
    const { allocations, leases } = await nodeHoldings(facts, node.id)
    if (allocations === 0 && leases === 0) continue
    errors.push(
      transitionError({
        code: 'TRANSITION_NODE_REMOVAL_UNSAFE',
        path: pointer('nodes'),
        expected: `node "${node.id}" kept (state: drained) until it holds no allocations and no leases`,
        actual: { node: node.id, allocations, leases },
        message: `node "${node.id}" was removed but still holds ${allocations} allocation(s) and ${leases} live lease(s); set it to drained first and remove it when empty`,
      }),
    )
  }
  return errors
}
