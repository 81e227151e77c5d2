// Runs every transition rule on a change (previous -> current definition) with the state facts.
import type { HostPolicy } from '../host-policy.js'
import type { Definition, DefinitionError } from '../types.js'
import { budgetCoversReservations } from './budget-shrink.js'
import { enabledNodesHaveCapacity } from './enable-without-capacity.js'
import type { TransitionFacts } from './facts.js'
import { removedNodesAreEmpty } from './node-removal.js'
import type { TransitionRule } from './transition-rule.js'
import { revisionsProvenByCanary } from './unproven-revision.js'

const TRANSITION_RULES: readonly TransitionRule[] = [
  removedNodesAreEmpty,
  budgetCoversReservations,
  enabledNodesHaveCapacity,
  revisionsProvenByCanary,
]

export async function checkTransitions(
  previous: Definition,
  current: Definition,
  facts: TransitionFacts,
  policy: HostPolicy,
): Promise<DefinitionError[]> {
  const results = await Promise.all(TRANSITION_RULES.map((rule) => rule({ previous, current, facts, policy })))
  return results.flat()
}
