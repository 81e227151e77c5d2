// `fleetkit node token`: a fresh single-use enrollment secret for a node enrolled by hand.
// It replaces the previous one; only its SHA-256 is stored, the clear value is handed out once.
import type { StatePool } from '../../store/transaction.js'

import type { Clock } from '../../config/clock.js'
import type { Definition } from '../../definition/types.js'
import type { Rng } from '../../config/rng.js'
import { newEnrollmentSecret } from '../../render/enrollment-secret.js'
import { nodeTarget } from '../../render/seed-documents.js'
import { withTransaction } from '../../store/database.js'
import { lockNodeSecretState, onDatabaseClock } from '../../store/nodes/enrollment-secrets.js'
import { getNode } from '../../store/nodes/nodes.js'
import { assertNoProvisionRun } from '../provision/provision-guard.js'
import { assertSamePending, confirmReplacing, otherPendingSeed, secretTimes } from '../seed/pending-seed.js'
import type { Confirm } from './node-transition.js'
import {
  applySecretPlan,
  planSecret,
  reissueAtStake,
  replanLocked,
  type SecretHolder,
  type SecretVia,
} from './secret-reissue.js'

export interface NodeTokenOptions {
  /** The command's pool: this function runs one transaction on it and never opens or closes it. */
  pool: StatePool
  nodeId: string
  ttlMs: number
  /** A new secret for a node past provisioning, on purpose (recorded as secret_reissued). */
  reissue?: boolean
  /**
   * Asked before a secret is reissued to an enrolled node (its agent can be replaced by whoever holds it),
   * or issued to a node with a pending worker seed; without it the first goes ahead (--reissue says it)
   * and the second is refused with SEED_KIND_PENDING, as `seed --kind agent` refuses it.
   */
  confirm?: Confirm
  /**
   * True when the secret goes over SSH to the host that booted from the node's worker seed, verified by
   * its pinned key (`fleetkit sync` enrolling it): that hands the seed's host its enrollment, it does not
   * replace the seed, so a pending worker seed is not asked about.
   */
  toPinnedHost?: boolean
  /**
   * The command the secret's event names (default `node token`): `sync` and `reconcile` issue one
   * through this function when they enroll a worker-seeded host, and an audit must tell them apart.
   */
  via?: Exclude<SecretVia, 'seed'>
  /** Read only when the node is not in the state yet (a declared node enrolled by hand). */
  loadDefinition: () => Promise<Definition>
  /** Who asks, recorded in the secret's event: the command's actor (src/cli/actor.ts). */
  actor: string
  clock: Clock
  rng: Rng
  /**
   * When the operator's command started, on `clock`'s time (default: this process's start). A reissue
   * is refused when another run stored a secret after it: the two ran at once, and the other's is kept.
   */
  startedAt?: Date
}

export interface NodeTokenResult {
  /** @minLength 1 */
  node: string
  /**
   * The clear secret: printed once, by design; the state keeps only its SHA-256.
   * @pattern ^[0-9a-f]{64}$
   */
  secret: string
  /** @format date-time */
  expiresAt: string
  /** True when the node was registered by this call (declared, not in the state before). */
  registered: boolean
  /** True when --reissue gave a node past provisioning a new secret. */
  reissued: boolean
}

/**
 * Plans, then stores the secret's hash in one transaction holding the node's lock, and returns
 * the clear secret only once that transaction committed: the caller prints it after, so a secret
 * that is printed is always the one stored. Of concurrent runs for one node exactly one stores;
 * each other is refused with its code (NODE_SECRET_PENDING, or NODE_CHANGED_CONCURRENTLY for a
 * reissue) and has nothing to print. Runs are concurrent when one stored its secret after another
 * started, however late the other read the node (processes start unevenly: the last may read after
 * the first committed).
 */
export async function issueNodeToken(options: NodeTokenOptions): Promise<NodeTokenResult> {
  const { pool, nodeId } = options
  const retry = `fleetkit node token ${nodeId}`
  const reissue = options.reissue === true
  const row = await getNode(pool, nodeId)
  const seen: SecretHolder | undefined = row
    ? { status: row.status, secretExpiresAt: row.enrollmentSecretExpiresAt, secretUsedAt: row.enrollmentSecretUsedAt }
    : undefined
  // A provision run's server boots from its own seed: no secret may replace that one (checked again under the lock).
  assertNoProvisionRun(nodeId, row?.provisionState, retry)
  // Refused before anything else is read; planned again under the lock.
  const first = planSecret(nodeId, seen, reissue, retry, options.clock.now())
  const yes = `${retry}${reissue ? ' --reissue' : ''} --yes`
  // A worker seed out for the node (its key pinned, its host not enrolled) is replaced only on purpose, as by
  // an agent seed: whoever uses this secret is not the host booting from that seed. Sync's own hand-over is not.
  const pending =
    options.toPinnedHost === true
      ? undefined
      : otherPendingSeed('agent', row && { ...row, ...secretTimes(row) }, options.clock.now())
  await confirmReplacing(nodeId, 'token', pending, options.confirm, yes)
  if (first.mode === 'reissue-enrolled' && options.confirm) {
    await options.confirm({
      what: reissueAtStake(nodeId, first.previousStatus),
      command: yes,
      data: { node: nodeId, status: first.previousStatus },
    })
  }
  const target = row ? { id: row.id, pool: row.pool } : nodeTarget(await options.loadDefinition(), nodeId, undefined)
  const secret = newEnrollmentSecret(options.rng)
  const now = options.clock.now()
  const expiresAt = new Date(now.getTime() + options.ttlMs)
  const plan = await withTransaction(pool, async (client) => {
    const locked = await lockNodeSecretState(client, target.id)
    assertNoProvisionRun(target.id, locked?.provisionState, retry)
    // A worker seed written since the read above is never replaced unasked; the one confirmed may be.
    if (options.toPinnedHost !== true) assertSamePending(target.id, 'token', pending, locked, options.clock.now(), yes)
    const startedAt = await onDatabaseClock(
      client,
      options.startedAt ?? new Date(performance.timeOrigin),
      options.clock.now(),
    )
    const current = replanLocked(target.id, seen, locked, reissue, retry, options.clock.now(), startedAt)
    await applySecretPlan(client, {
      plan: current,
      node: target,
      secretSha256: secret.sha256,
      expiresAt,
      actor: options.actor,
      via: options.via ?? 'node token',
      now,
    })
    return current
  })
  return {
    node: target.id,
    secret: secret.secret,
    expiresAt: expiresAt.toISOString(),
    registered: plan.previousStatus === null,
    reissued: plan.mode !== 'provision',
  }
}
