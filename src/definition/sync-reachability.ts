// The nodes `fleetkit sync` could never reach: sync logs in over SSH at the node's address (its
// declared ssh.host, or the server fleetkit provisioned for a node in a pool with a provider) as
// ssh.user; a node it targets without an `ssh` block has no account (the inventory would fall back
// to root, whose login every seed disables) and, outside a provider pool, no address.
import { pointer } from './json-pointer.js'
import { poolHasProvider } from './provider-pools.js'
import type { Definition } from './types.js'

/** One node validate flags without refusing the file (an agent-only node is a choice, not a typo). */
export interface ValidateFinding {
  /** @pattern ^[A-Z][A-Z0-9_]+$ */
  code: 'NODE_UNREACHABLE_BY_SYNC'
  /** JSON pointer of the node in the definition. */
  path: string
  /** @minLength 1 */
  node: string
  /** @minLength 1 */
  message: string
}

/** Every node sync targets (any state but disabled) that declares no `ssh` block, in file order. */
export function unreachableBySync(definition: Pick<Definition, 'nodes' | 'pools' | 'providers'>): ValidateFinding[] {
  return definition.nodes.flatMap((node, index) =>
    node.state === 'disabled' || node.ssh !== undefined
      ? []
      : [
          {
            code: 'NODE_UNREACHABLE_BY_SYNC' as const,
            path: pointer('nodes', index),
            node: node.id,
            message: poolHasProvider(definition, node.pool)
              ? `node "${node.id}" declares no ssh block (its account): fleetkit sync targets it but could never log in; add ssh: { user } (the account its seed creates; its address is the server fleetkit provisions), or state: disabled`
              : `node "${node.id}" declares no ssh block (host and account): fleetkit sync targets it but could never reach it; add ssh: { host, user } (the account its seed creates), or state: disabled`,
          },
        ],
  )
}

/** `Warning (CODE) /path: message`: one line per finding, under validate's summary. */
export function formatFinding(f: ValidateFinding): string {
  return `Warning (${f.code}) ${f.path}: ${f.message}`
}
