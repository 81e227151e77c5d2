// Which seed of a node is out and not yet used, read from its state: so a seed of the other kind
// never silently replaces it (a host may be booting from it right now).
import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { SeedKind } from '../../render/seed-documents.js'
import type { Confirm } from '../node/node-transition.js'

/** What the state says of a node's seeds: its status, pinned host key and pending secret. */
export interface SeedHolder {
  status: string
  hostKeyPublic: string | null
  secretExpiresAt: Date | null
  secretUsedAt: Date | null
}

export interface PendingSeed {
  kind: SeedKind
  /** When its enrollment secret expires (an agent seed); null for a worker seed. */
  until: Date | null
}

/**
 * The seed a provisioning node waits on at `now`: `agent` while its enrollment secret is unused and
 * unexpired (an agent seed, or a token, is out); else `worker` when a host key is pinned (a worker
 * seed is out and its host has not enrolled). Undefined for any other node.
 */
function pendingSeed(node: SeedHolder | undefined, now: Date): PendingSeed | undefined {
  if (node?.status !== 'provisioning') return undefined
  if (node.secretExpiresAt !== null && node.secretUsedAt === null && node.secretExpiresAt.getTime() > now.getTime())
    return { kind: 'agent', until: node.secretExpiresAt }
  if (node.hostKeyPublic !== null) return { kind: 'worker', until: null }
  return undefined
}

/** What replacing `pending` with a seed of `kind` puts at stake, for the question or the refusal. */
function seedKindAtStake(nodeId: string, kind: SeedKind, pending: PendingSeed): string {
  const seed = `${kind === 'agent' ? 'an' : 'a'} ${kind} seed`
  return pending.kind === 'agent'
    ? `write ${seed} for ${nodeId}, which has a pending agent seed (its enrollment secret unused, valid until ${pending.until!.toISOString()}): a host booting from that agent seed is not the host this ${kind} seed describes, and one of the two seeds is wasted`
    : `write ${seed} for ${nodeId}, which has a pending worker seed (its SSH host key pinned, the host not enrolled yet): a host booted from that worker seed is not the host this ${kind} seed describes, and one of the two seeds is wasted`
}

/** A node row's secret times under the names the seed guards read. */
export function secretTimes(row: { enrollmentSecretExpiresAt: Date | null; enrollmentSecretUsedAt: Date | null }) {
  return { secretExpiresAt: row.enrollmentSecretExpiresAt, secretUsedAt: row.enrollmentSecretUsedAt }
}

/** The pending seed of the kind this run does not write, if the node has one. */
export function otherPendingSeed(kind: SeedKind, node: SeedHolder | undefined, now: Date): PendingSeed | undefined {
  const pending = pendingSeed(node, now)
  return pending && pending.kind !== kind ? pending : undefined
}

/** Asks before a pending seed of the other kind is replaced; refused with SEED_KIND_PENDING when nobody can answer. */
export async function confirmReplacing(
  nodeId: string,
  kind: SeedKind,
  pending: PendingSeed | undefined,
  confirm: Confirm | undefined,
  yes: string,
): Promise<void> {
  if (!pending) return
  const request = {
    what: seedKindAtStake(nodeId, kind, pending),
    command: yes,
    code: 'SEED_KIND_PENDING' as const,
    data: { node: nodeId, pendingKind: pending.kind, kind },
  }
  if (confirm) return confirm(request)
  throw new FleetkitError(request.code, `${request.what}; nothing changed`, {
    actions: [`${yes}   (replaces it on purpose)`],
    data: request.data,
  })
}

/**
 * Under the lock: a pending seed of the other kind that this run did not see (another run wrote it
 * meanwhile) is never replaced unasked; one it saw, and was confirmed, may be.
 */
export function assertSamePending(
  nodeId: string,
  kind: SeedKind,
  seen: PendingSeed | undefined,
  locked: SeedHolder | undefined,
  now: Date,
  yes: string,
): void {
  const current = otherPendingSeed(kind, locked, now)
  if (!current || (seen && seen.kind === current.kind)) return
  throw new FleetkitError('SEED_KIND_PENDING', `${seedKindAtStake(nodeId, kind, current)}; nothing changed`, {
    actions: [`${yes}   (replaces it on purpose)`],
    data: { node: nodeId, pendingKind: current.kind, kind },
  })
}
