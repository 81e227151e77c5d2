// Rule: a node is reached as a non-root account with sudo, never as root: root logins are
// disabled on every host fleetkit converges (the worker seed sets disable_root).
import { pointer } from '../json-pointer.js'
import { type DefinitionRule, semanticError } from './rule.js'

export const sshUserNotRoot: DefinitionRule = ({ definition }) =>
  definition.nodes.flatMap((node, index) =>
    node.ssh?.user !== 'root'
      ? []
      : [
          semanticError({
            code: 'NODE_SSH_USER_ROOT',
            path: pointer('nodes', index, 'ssh', 'user'),
            expected: 'a non-root account with sudo (the one `fleetkit seed --kind worker` creates)',
            actual: 'root',
            message: `node "${node.id}" logs in as root; name its non-root sudo account in ssh.user`,
          }),
        ],
  )
