// Where sync's direct SSH steps dial each node: the same address, user, port and pinned key the
// rendered inventory gives Ansible (src/render/inventory.ts), so both ways reach the same host. The
// address follows src/render/node-address.ts: a provisioned node is its server's recorded address.
import type { Definition } from '../definition/types.js'
import { nodeAddress } from '../render/node-address.js'
import type { NodeRow } from '../store/nodes/nodes.js'
import type { SshTarget } from './ssh-client.js'

/** What the address rule and the pinned key need of a state row. */
export type SshTargetRow = Pick<
  NodeRow,
  'id' | 'pool' | 'sshHost' | 'hostKeyPublic' | 'provider' | 'providerServerId' | 'publicIpv4' | 'publicIpv6'
>

/** The SSH target of each node in `ids`: its address by the one rule, then the declaration's account and port. */
export function sshTargets(
  definition: Pick<Definition, 'nodes' | 'providers' | 'pools'>,
  stateRows: readonly SshTargetRow[],
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
      // Without an address Ansible dials the inventory name, the node id (the plan never targets an
      // unprovisioned node, so that is a node with no address anywhere: validate warns of it).
      host: nodeAddress(definition, id, node, row).host ?? id,
      port: node?.ssh?.port ?? 22,
      user: node?.ssh?.user ?? 'root',
      pinnedKey: pinned ? pinned.trim().split(/\s+/).slice(0, 2).join(' ') : null,
    })
  }
  return targets
}
