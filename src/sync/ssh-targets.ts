// Where sync's direct SSH steps dial each node: the same address, user, port and pinned key the
// rendered inventory gives Ansible (src/render/inventory.ts), so both ways reach the same host.
import type { Definition } from '../definition/types.js'
import type { NodeRow } from '../store/nodes/nodes.js'
import type { SshTarget } from './ssh-client.js'

/** The SSH target of each node in `ids`: the declaration first, then the state (as the inventory reads them). */
export function sshTargets(
  definition: Pick<Definition, 'nodes'>,
  stateRows: readonly Pick<NodeRow, 'id' | 'sshHost' | 'hostKeyPublic'>[],
  ids: readonly string[],
): Map<string, SshTarget> {
  const declared = new Map(definition.nodes.map((n) => [n.id, n]))
  const state = new Map(stateRows.map((r) => [r.id, r]))
  const targets = new Map<string, SshTarget>()
  for (const id of ids) {
    const node = declared.get(id)
    const row = state.get(id)
    const pinned = row?.hostKeyPublic ?? node?.hostKey ?? null
    targets.set(id, {
      node: id,
      // Without an address Ansible dials the inventory name, the node id.
      host: node?.ssh?.host ?? row?.sshHost ?? id,
      port: node?.ssh?.port ?? 22,
      user: node?.ssh?.user ?? 'root',
      pinnedKey: pinned ? pinned.trim().split(/\s+/).slice(0, 2).join(' ') : null,
    })
  }
  return targets
}
