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

/**
 * What this run gives out: a seed of a kind, or `token`, the bare enrollment secret of `node token`
 * (an agent's enrollment without its seed): it replaces a pending worker seed as an agent seed does.
 */
export type SeedOut = SeedKind | 'token'

/** The kind of seed `out` stands for: a token is an agent's enrollment. */
function kindOf(out: SeedOut): SeedKind {
  return out === 'token' ? 'agent' : out
}

/** What replacing `pending` with `out` puts at stake, for the question or the refusal. */
function seedKindAtStake(nodeId: string, out: SeedOut, pending: PendingSeed): string {
  const [given, mine] =
    out === 'token'
      ? ['issue an enrollment secret', 'this secret enrolls']
      : [`write ${out === 'agent' ? 'an' : 'a'} ${out} seed`, `this ${out} seed describes`]
  return pending.kind === 'agent'
    ? `${given} for ${nodeId}, which has a pending agent seed (its enrollment secret unused, valid until ${pending.until!.toISOString()}): a host booting from that agent seed is not the host ${mine}, and one of the two is wasted`
    : `${given} for ${nodeId}, which has a pending worker seed (its SSH host key pinned, the host not enrolled yet): a host booted from that worker seed is not the host ${mine}, and one of the two is wasted`
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
  out: SeedOut,
  pending: PendingSeed | undefined,
  confirm: Confirm | undefined,
  yes: string,
): Promise<void> {
  if (!pending) return
  const request = {
    what: seedKindAtStake(nodeId, out, pending),
    command: yes,
    code: 'SEED_KIND_PENDING' as const,
    data: { node: nodeId, pendingKind: pending.kind, kind: kindOf(out) },
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
  out: SeedOut,
  seen: PendingSeed | undefined,
  locked: SeedHolder | undefined,
  now: Date,
  yes: string,
): void {
  const current = otherPendingSeed(kindOf(out), locked, now)
  if (!current || (seen && seen.kind === current.kind)) return
  throw new FleetkitError('SEED_KIND_PENDING', `${seedKindAtStake(nodeId, out, current)}; nothing changed`, {
    actions: [`${yes}   (replaces it on purpose)`],
    data: { node: nodeId, pendingKind: current.kind, kind: kindOf(out) },
  })
}
