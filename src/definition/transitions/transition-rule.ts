// What a transition rule is: the previous and the current definition (both schema-valid),
// the state facts and the host policy in; errors with check ID definition:transition out.
import type { DefinitionCode } from '../../checks/codes/definition.js'
import type { HostPolicy } from '../host-policy.js'
import type { Definition, DefinitionError } from '../types.js'
import type { TransitionFacts } from './facts.js'

interface TransitionContext {
  previous: Definition
  current: Definition
  facts: TransitionFacts
  policy: HostPolicy
}

export type TransitionRule = (context: TransitionContext) => Promise<DefinitionError[]>

export function transitionError(fields: {
  code: DefinitionCode
  path: string
  expected: unknown
  actual: unknown
  message: string
}): DefinitionError {
  return { ...fields, check: 'definition:transition' }
}

/** Allocations and live leases a node holds, per the facts. */
export async function nodeHoldings(
  facts: TransitionFacts,
  nodeId: string,
): Promise<{ allocations: number; leases: number }> {
  const [allocations, leases] = await Promise.all([facts.activeAllocations(nodeId), facts.liveLeases(nodeId)])
  return { allocations, leases }
}
