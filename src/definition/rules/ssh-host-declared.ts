// Rule: a node that declares `ssh` names its `ssh.host`, unless its pool has a provider
// (provider-pools.ts): then fleetkit provisions the node and its address is the server's, recorded in
// the state, so fleet.yaml may leave it out. Any other node is a host fleetkit did not make, and
// fleet.yaml is the only place its address comes from.
import { pointer } from '../json-pointer.js'
import { poolHasProvider } from '../provider-pools.js'
import { type DefinitionRule, semanticError } from './rule.js'

export const sshHostDeclared: DefinitionRule = ({ definition }) =>
  definition.nodes.flatMap((node, index) =>
    node.ssh === undefined ||
    node.ssh.host !== undefined ||
    // An undeclared pool is POOL_REFERENCE_UNKNOWN's to report.
    definition.pools[node.pool] === undefined ||
    poolHasProvider(definition, node.pool)
      ? []
      : [
          semanticError({
            code: 'NODE_SSH_HOST_MISSING',
            path: pointer('nodes', index, 'ssh', 'host'),
            expected:
              'the host name or address sync reaches the node at (only a node in a pool with a provider, whose server fleetkit provisions, may leave it out)',
            actual: null,
            message: `node "${node.id}" declares ssh without host, and its pool "${node.pool}" has no provider (providers.hetzner and the pool's image), so nothing else gives its address; add ssh.host`,
          }),
        ],
  )
