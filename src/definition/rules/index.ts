// The semantic rules `fleetkit validate` runs after the schema passes, in report order.
// Secrets are not here: that rule runs on any parsed data, before the schema (see validate-text.ts).
import { canaryExists } from './canary-reference.js'
import { capacityWithinBudget } from './capacity-budget.js'
import { dataVolumeMountsAllowed } from './data-volume-mount.js'
import { dockerNetworkPolicySound } from './docker-network-policy.js'
import { documentationRangesRefused } from './documentation-ranges.js'
import { nodeIdsUnique } from './node-ids-unique.js'
import { poolReferencesExist } from './pool-references.js'
import { regionsKnown } from './regions.js'
import type { DefinitionRule, RuleContext } from './rule.js'
import { serverTypesKnown } from './server-types.js'
import { sizesAtLeastMinimum } from './sizing.js'
import type { DefinitionError } from '../types.js'

export const SEMANTIC_RULES: readonly DefinitionRule[] = [
  nodeIdsUnique,
  poolReferencesExist,
  canaryExists,
  serverTypesKnown,
  regionsKnown,
  sizesAtLeastMinimum,
  capacityWithinBudget,
  dockerNetworkPolicySound,
  documentationRangesRefused,
  dataVolumeMountsAllowed,
]

export function checkSemantics(context: RuleContext): DefinitionError[] {
  return SEMANTIC_RULES.flatMap((rule) => rule(context))
}
