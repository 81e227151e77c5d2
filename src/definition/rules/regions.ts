// Rule: every region (a pool's regions, a node's region) is in the host policy's catalog
// when the policy has one; a typo would otherwise surface only when provisioning fails.
import { didYouMean } from '../did-you-mean.js'
import { knownRegions } from '../host-policy.js'
import { pointer } from '../json-pointer.js'
import type { DefinitionError } from '../types.js'
import { type DefinitionRule, semanticError } from './rule.js'

export const regionsKnown: DefinitionRule = ({ definition, policy }) => {
  const known = knownRegions(policy)
  if (known === undefined) return []
  const errors: DefinitionError[] = []
  const check = (path: string, owner: string, region: string) => {
    if (known.includes(region)) return
    errors.push(
      semanticError({
        code: 'REGION_UNKNOWN',
        path,
        expected: known,
        actual: region,
        message: `${owner} region "${region}" is not in policy/host-policy.yaml regions${didYouMean(region, known)} (${known.join(', ')})`,
      }),
    )
  }
  for (const [name, pool] of Object.entries(definition.pools)) {
    for (const [index, region] of (pool.regions ?? []).entries())
      check(pointer('pools', name, 'regions', index), `pool "${name}"`, region)
  }
  for (let index = 0; index < definition.nodes.length; index++) {
    const node = definition.nodes[index]!
    if (node.region !== undefined) check(pointer('nodes', index, 'region'), `node "${node.id}"`, node.region)
  }
  return errors
}
