// The semantic rules `fleetkit validate` runs after the schema passes, in report order.
// Secrets are not here: that rule runs on any parsed data, before the schema (see validate-text.ts).
import { canaryExists } from './canary-reference.js'
import { containerNotProvisioned } from './container-not-provisioned.js'
import { capacityWithinBudget } from './capacity-budget.js'
import { capacityWithinServerType } from './capacity-within-server-type.js'
import { dataVolumeMountsAllowed } from './data-volume-mount.js'
import { dockerNetworkBasesClear } from './docker-network-base-conflicts.js'
import { dockerNetworkPolicySound } from './docker-network-policy.js'
import { documentationRangesRefused } from './documentation-ranges.js'
import { nodeIdsUnique } from './node-ids-unique.js'
import { poolReferencesExist } from './pool-references.js'
import { sshPortOnlyThroughPublicSsh } from './public-ssh-port.js'
import { regionWithinPool } from './region-in-pool.js'
import { regionsKnown } from './regions.js'
import type { DefinitionRule, RuleContext } from './rule.js'
import { serverTypeArchitectureMatchesPool } from './server-type-architecture.js'
import { serverTypesKnown } from './server-types.js'
import { sizesAtLeastMinimum } from './sizing.js'
import { sshAddressesUnique } from './ssh-addresses-unique.js'
import { sshHostDeclared } from './ssh-host-declared.js'
import { sshUserNotRoot } from './ssh-user-not-root.js'
import { sshUserNotServiceAccount } from './ssh-user-not-service-account.js'
import type { DefinitionError } from '../types.js'

const SEMANTIC_RULES: readonly DefinitionRule[] = [
  nodeIdsUnique,
  poolReferencesExist,
  canaryExists,
  serverTypesKnown,
  serverTypeArchitectureMatchesPool,
  regionsKnown,
  regionWithinPool,
  sizesAtLeastMinimum,
  capacityWithinServerType,
  capacityWithinBudget,
  dockerNetworkPolicySound,
  dockerNetworkBasesClear,
  documentationRangesRefused,
  dataVolumeMountsAllowed,
  sshHostDeclared,
  sshAddressesUnique,
  sshUserNotRoot,
  sshUserNotServiceAccount,
  sshPortOnlyThroughPublicSsh,
  containerNotProvisioned,
]

export function checkSemantics(context: RuleContext): DefinitionError[] {
  return SEMANTIC_RULES.flatMap((rule) => rule(context))
}
