// Rule: a node is never reached as one of fleetkit's own service accounts. The agent role owns its
// account (shell, home, groups) and would refuse or reshape it; the operator would lose the login
// sync depends on. The role refuses such an account on the host too (AGENT_ACCOUNT_FOREIGN): this
// rule says so before anything reaches a host.
import { pointer } from '../json-pointer.js'
import { type DefinitionRule, semanticError } from './rule.js'

/** The account fleetkit-agent runs as (ansible/roles/agent, cloud-init/; a test proves they agree). */
export const AGENT_SERVICE_ACCOUNT = 'fleetkit-agent'
/** The account fleetkit-gateway runs as (systemd/fleetkit-gateway.service). */
const GATEWAY_SERVICE_ACCOUNT = 'fleetkit-gateway'

export const SERVICE_ACCOUNTS: readonly string[] = [AGENT_SERVICE_ACCOUNT, GATEWAY_SERVICE_ACCOUNT]

export const sshUserNotServiceAccount: DefinitionRule = ({ definition }) =>
  definition.nodes.flatMap((node, index) => {
    const user = node.ssh?.user
    if (user === undefined || !SERVICE_ACCOUNTS.includes(user)) return []
    return [
      semanticError({
        code: 'NODE_SSH_USER_RESERVED',
        path: pointer('nodes', index, 'ssh', 'user'),
        expected: `an operator account, not one of fleetkit's service accounts (${SERVICE_ACCOUNTS.join(', ')})`,
        actual: user,
        message: `node "${node.id}" logs in as ${user}, fleetkit's own service account; name the operator's sudo account in ssh.user (e.g. fleetkit)`,
      }),
    ]
  })
