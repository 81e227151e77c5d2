// Rule: no two nodes share an SSH address (host and port): one of them would be converged twice
// and the other never, and a pinned host key would fail for one of them. A node without ssh.host (in a
// pool with a provider) is reached at its provisioned server's address, which no other server has.
import { pointer } from '../json-pointer.js'
import type { DefinitionError } from '../types.js'
import { type DefinitionRule, semanticError } from './rule.js'

const DEFAULT_SSH_PORT = 22

export const sshAddressesUnique: DefinitionRule = ({ definition }) => {
  const first = new Map<string, { index: number; id: string }>()
  const errors: DefinitionError[] = []
  for (let index = 0; index < definition.nodes.length; index++) {
    const node = definition.nodes[index]!
    if (node.ssh?.host === undefined) continue
    const port = node.ssh.port ?? DEFAULT_SSH_PORT
    // Host names are case-insensitive; a trailing dot names the same host.
    const key = `${node.ssh.host.toLowerCase().replace(/\.$/, '')} ${port}`
    const earlier = first.get(key)
    if (!earlier) {
      first.set(key, { index, id: node.id })
      continue
    }
    errors.push(
      semanticError({
        code: 'NODE_SSH_ADDRESS_DUPLICATE',
        path: pointer('nodes', index, 'ssh', 'host'),
        expected: 'an SSH host and port no other node uses',
        actual: `${node.ssh.host}:${port}`,
        message: `node "${node.id}" has the SSH address ${node.ssh.host}:${port} of node "${earlier.id}" at ${pointer('nodes', earlier.index)}`,
      }),
    )
  }
  return errors
}
