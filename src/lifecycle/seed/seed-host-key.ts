// The pinned SSH host key a seed registers, for either seed kind: a worker seed always carries
// one, an agent seed for a node that declares ssh.user too (render/node-access.ts). The key is
// pinned in the same transaction that registers the node, and a pinned key is replaced only on purpose.
import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { SeedKind } from '../../render/seed-documents.js'
import type { Queryable } from '../../store/database.js'
import { appendEvent } from '../../store/events.js'
import { setNodeHostKey } from '../../store/nodes/nodes.js'
import { changedConcurrently } from '../node/secret-reissue.js'

/** A public key's type and the start of its base64, enough to tell keys apart in a message. */
export function shortKey(publicKey: string): string {
  return publicKey.split(' ').slice(0, 2).join(' ').slice(0, 40)
}

/** The definition's hostKey is the reviewed truth: a pinned key is replaced only with --rekey. */
export function assertRekeyAllowed(
  nodeId: string,
  pinned: string | null | undefined,
  rekey: boolean,
  kind: SeedKind = 'worker',
): void {
  if (!pinned || rekey) return
  throw new FleetkitError(
    'HOST_KEY_PINNED',
    `node ${nodeId} has a pinned SSH host key (${shortKey(pinned)}...); a${kind === 'agent' ? 'n agent' : ' worker'} seed would give it a new one, so nothing was written`,
    {
      actions: [
        `fleetkit seed ${nodeId} --kind ${kind} --rekey   (only for a host being reinstalled; then put the printed hostKey into fleet.yaml)`,
      ],
      data: { node: nodeId },
    },
  )
}

/**
 * Under the node's lock: refuses a key pinned since the seed was planned (unless --rekey replaces
 * exactly the key this run read), stores the new key and records a replaced one as host_key_replaced.
 */
export async function pinSeedHostKey(
  client: Queryable,
  options: {
    nodeId: string
    kind: SeedKind
    /** The key pinned when the seed was planned. */
    planned: string | null | undefined
    /** The key pinned now, read under the lock. */
    locked: string | null | undefined
    hostKeyPublic: string
    rekey: boolean
    retry: string
    actor: string
    now: Date
  },
): Promise<void> {
  const { nodeId, locked } = options
  assertRekeyAllowed(nodeId, locked, options.rekey, options.kind)
  // A rekey replaces the key this run read; another run's newer key is not replaced unseen.
  if ((locked ?? null) !== (options.planned ?? null))
    throw changedConcurrently(nodeId, 'SSH host key', `${options.retry} --rekey`)
  await setNodeHostKey(client, nodeId, options.hostKeyPublic)
  if (locked) {
    await appendEvent(client, {
      kind: 'host_key_replaced',
      nodeId,
      at: options.now,
      data: { actor: options.actor, previous_host_key: locked, host_key: options.hostKeyPublic },
    })
  }
}
