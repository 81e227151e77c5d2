// The pinned SSH host key a seed registers, for either seed kind: a worker seed always carries
// one, an agent seed for a node that declares ssh.user too (render/node-access.ts), and so does the
// seed `node provision` hands its server. The key is pinned in the same transaction that registers
// the node (or records the create intent), and a pinned key is replaced only on purpose (--rekey).
import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { SeedKind } from '../../render/seed-documents.js'
import type { Queryable } from '../../store/database.js'
import { appendEvent } from '../../store/events.js'
import { lockNodeSecretState } from '../../store/nodes/enrollment-secrets.js'
import { setNodeHostKey } from '../../store/nodes/nodes.js'
import { changedConcurrently } from '../node/secret-reissue.js'

/** A public key's type and the start of its base64, enough to tell keys apart in a message. */
export function shortKey(publicKey: string): string {
  return publicKey.split(' ').slice(0, 2).join(' ').slice(0, 40)
}

/** What gives a node a new host key: a seed of either kind, or `node provision` (its server's seed). */
export type HostKeyPinner = SeedKind | 'provision'

/** The definition's hostKey is the reviewed truth: a pinned key is replaced only with --rekey. */
export function assertRekeyAllowed(
  nodeId: string,
  pinned: string | null | undefined,
  rekey: boolean,
  kind: HostKeyPinner = 'worker',
  /** The command to run again with --rekey added (default: the plain seed or provision of the node). */
  again?: string,
  /** fleet.yaml's hostKey of the node: only then does the new key need copying there. */
  declared?: string | null,
): void {
  if (!pinned || rekey) return
  const provision = kind === 'provision'
  const what = provision
    ? 'provisioning would create its server with a new one, so nothing was created or stored'
    : `a${kind === 'agent' ? 'n agent' : ' worker'} seed would give it a new one, so nothing was written`
  const command =
    again !== undefined
      ? `${again} --rekey`
      : provision
        ? `fleetkit node provision ${nodeId} --rekey`
        : `fleetkit seed ${nodeId} --kind ${kind} --rekey`
  throw new FleetkitError(
    'HOST_KEY_PINNED',
    `node ${nodeId} has a pinned SSH host key (${shortKey(pinned)}...); ${what}`,
    {
      actions: [
        `${command}   (only for a host being ${provision ? 'replaced' : 'reinstalled'}; ${
          declared
            ? "then put the printed hostKey into fleet.yaml in place of the node's hostKey"
            : 'the new key is pinned in the state: nothing to copy into fleet.yaml'
        })`,
      ],
      data: { node: nodeId },
    },
  )
}

/**
 * Under the node's lock: refuses a key pinned since the seed was planned (unless --rekey replaces
 * exactly the key this run read), stores the new key and records it: a first pin as host_key_pinned
 * (a worker seed writes no other event), a replaced key as host_key_replaced.
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
    /** fleet.yaml's hostKey of the node. */
    declared: string | null | undefined
    hostKeyPublic: string
    rekey: boolean
    retry: string
    actor: string
    now: Date
  },
): Promise<void> {
  const { nodeId, locked } = options
  assertRekeyAllowed(nodeId, locked, options.rekey, options.kind, undefined, options.declared)
  // A rekey replaces the key this run read; another run's newer key is not replaced unseen.
  if ((locked ?? null) !== (options.planned ?? null))
    throw changedConcurrently(nodeId, 'SSH host key', `${options.retry} --rekey`)
  await storeHostKey(client, { ...options, previous: locked, via: 'seed' })
}

/**
 * Stores the new key and records it: a key it replaces (the state's, else the definition's) as
 * host_key_replaced, a first pin as host_key_pinned naming the command (`via`). Only the public half.
 */
async function storeHostKey(
  client: Queryable,
  options: {
    nodeId: string
    previous: string | null | undefined
    hostKeyPublic: string
    actor: string | null
    via: 'seed' | 'node provision'
    now: Date
  },
): Promise<void> {
  const { nodeId, previous } = options
  await setNodeHostKey(client, nodeId, options.hostKeyPublic)
  await appendEvent(client, {
    kind: previous ? 'host_key_replaced' : 'host_key_pinned',
    nodeId,
    at: options.now,
    data: previous
      ? { actor: options.actor, previous_host_key: previous, host_key: options.hostKeyPublic }
      : { actor: options.actor, host_key: options.hostKeyPublic, via: options.via },
  })
}

/**
 * `node provision`'s pin, in the create intent's transaction and under the node's lock: the rule of
 * a seed (a pinned key is replaced only with --rekey, and only the key the run read at its start),
 * then the key stored; a first pin is recorded as host_key_pinned, a replaced key as host_key_replaced.
 * A key this run pinned already (a next placement candidate sends the same seed) is left as it is.
 */
export async function pinProvisionHostKey(
  client: Queryable,
  options: {
    nodeId: string
    /** The definition's hostKey. */
    declared: string | undefined
    /** The key pinned when the run started, and its --rekey; absent when --resume continues a run that decided. */
    planned?: { hostKey: string | null; rekey: boolean }
    hostKeyPublic: string
    actor: string | null
    now: Date
  },
): Promise<void> {
  const { nodeId, planned } = options
  const stored = (await lockNodeSecretState(client, nodeId))?.hostKeyPublic ?? null
  if (stored === options.hostKeyPublic) return
  const locked = stored ?? options.declared ?? null
  if (planned) {
    assertRekeyAllowed(nodeId, locked, planned.rekey, 'provision', undefined, options.declared)
    if (locked !== planned.hostKey)
      throw changedConcurrently(nodeId, 'SSH host key', `fleetkit node provision --resume ${nodeId}`)
  }
  await storeHostKey(client, { ...options, previous: locked, via: 'node provision' })
}
