// Whether a node may get a new enrollment secret, and how: the ordinary way (new or still
// provisioning) or reissued on purpose (--reissue), which never strands an enrolled agent.
import { FleetkitError } from '../../checks/fleetkit-error.js'
import { appendEvent } from '../../store/events.js'
import type { Queryable } from '../../store/database.js'
import {
  clearSecretReissued,
  issueEnrollmentSecret,
  reissueEnrollmentSecret,
} from '../../store/nodes/enrollment-secrets.js'
import { upsertDeclaredNode } from '../../store/nodes/nodes.js'

/** Statuses whose agent holds a live certificate: a reissue keeps it until the new enrollment. */
const ENROLLED_STATUSES: ReadonlySet<string> = new Set(['active', 'unhealthy', 'draining', 'lost'])

export type SecretPlan =
  /** Not in the state, or still provisioning: register as provisioning, replace any pending secret. */
  | { mode: 'provision'; previousStatus: string | null }
  /** Enrolled: store the new secret beside its status and certificates (spec 05: revoked at the new enrollment). */
  | { mode: 'reissue-enrolled'; previousStatus: string }
  /** Parked or failed, or provisioning with a pending secret replaced on purpose: it is (again) provisioning. */
  | { mode: 'reissue-provision'; previousStatus: string }

/** What the plan reads of a node's row: its status and its pending secret, if any. */
export interface SecretHolder {
  status: string
  secretExpiresAt: Date | null
  secretUsedAt: Date | null
}

/**
 * The plan for `node` (undefined: not in the state) at `now`. Throws NODE_NOT_PROVISIONING for a
 * node past provisioning unless `reissue`, and always for a retired one; NODE_SECRET_PENDING for a
 * provisioning node whose secret is unused and unexpired (a seed already out, maybe booting a
 * host) unless `reissue`, so a seed printed only to look at it (`| head`) never replaces it.
 */
export function planSecret(
  nodeId: string,
  node: SecretHolder | undefined,
  reissue: boolean,
  retry: string,
  now: Date,
): SecretPlan {
  if (node === undefined) return { mode: 'provision', previousStatus: null }
  const { status } = node
  if (status === 'provisioning') {
    const pending =
      node.secretExpiresAt !== null && node.secretUsedAt === null && node.secretExpiresAt.getTime() > now.getTime()
    if (!pending) return { mode: 'provision', previousStatus: status }
    if (reissue) return { mode: 'reissue-provision', previousStatus: status }
    const until = node.secretExpiresAt!.toISOString()
    throw new FleetkitError(
      'NODE_SECRET_PENDING',
      `node ${nodeId} is provisioning with an unused secret valid until ${until}: a new one would make the seed or token already given out useless, stranding a host that boots from it; nothing changed`,
      {
        actions: [
          `${retry} --reissue   (on purpose, for example when that seed was lost or never used)`,
          `or wait until ${until}, when it expires`,
        ],
        data: { node: nodeId, status, secretExpiresAt: until },
      },
    )
  }
  if (status === 'retired') {
    throw new FleetkitError(
      'NODE_NOT_PROVISIONING',
      `node ${nodeId} is retired: its certificates are revoked and it is never enrolled again; nothing changed`,
      {
        actions: ['declare a new node id in fleet.yaml for the host', 'fleetkit validate'],
        data: { node: nodeId, status },
      },
    )
  }
  if (reissue)
    return ENROLLED_STATUSES.has(status)
      ? { mode: 'reissue-enrolled', previousStatus: status }
      : { mode: 'reissue-provision', previousStatus: status }
  const what = ENROLLED_STATUSES.has(status)
    ? `a new enrollment secret would let whoever holds it enroll as ${nodeId} and replace the certificate its agent uses now`
    : 'a new enrollment secret would make it provisioning again'
  throw new FleetkitError(
    'NODE_NOT_PROVISIONING',
    `node ${nodeId} is ${status}, not provisioning: ${what}; nothing changed`,
    {
      actions: [
        `${retry} --reissue   (on purpose, for example for a rebuilt host; its current certificate keeps working until the new enrollment)`,
      ],
      data: { node: nodeId, status },
    },
  )
}

/**
 * The plan again, under the row lock, against the node as it is now (`locked`); `seen` is what
 * the first plan read. Without --reissue the plan itself refuses what another run did meanwhile
 * (its secret is pending: NODE_SECRET_PENDING). A reissue would replace anything, so it replaces
 * only what this run could have known: when another run changed the secret or the status between
 * this one's read and its lock, or stored a secret after this run started (`startedAt`, on the
 * database's clock: a run that read late, after another started at the same time committed), this
 * one is refused (NODE_CHANGED_CONCURRENTLY) and stores nothing, so of N reissues at once one wins.
 * A reissue started after the last secret was stored (the operator lost it again) replaces it.
 */
export function replanLocked(
  nodeId: string,
  seen: SecretHolder | undefined,
  locked: (SecretHolder & { secretIssuedAt?: Date | null }) | undefined,
  reissue: boolean,
  retry: string,
  now: Date,
  startedAt?: Date,
): SecretPlan {
  const issuedSinceStart =
    startedAt !== undefined && locked?.secretIssuedAt != null && locked.secretIssuedAt.getTime() > startedAt.getTime()
  if (reissue && (issuedSinceStart || !sameSecretHolder(seen, locked)))
    throw changedConcurrently(nodeId, 'enrollment secret', `${retry} --reissue`)
  return planSecret(nodeId, locked, reissue, retry, now)
}

function sameSecretHolder(a: SecretHolder | undefined, b: SecretHolder | undefined): boolean {
  if (a === undefined || b === undefined) return a === b
  const time = (d: Date | null) => d?.getTime() ?? null
  return (
    a.status === b.status &&
    time(a.secretExpiresAt) === time(b.secretExpiresAt) &&
    time(a.secretUsedAt) === time(b.secretUsedAt)
  )
}

/** Another run changed what this one was about to replace, between its read and its lock; nothing was stored or printed. */
export function changedConcurrently(nodeId: string, what: string, retry: string): FleetkitError {
  return new FleetkitError(
    'NODE_CHANGED_CONCURRENTLY',
    `node ${nodeId}: its ${what} or status was changed by another run while this one prepared its own; this run stored nothing and printed no secret, so the other run's is the one that works`,
    {
      actions: [`fleetkit node show ${nodeId}`, `${retry}   (again, only if the other run's output is lost)`],
      data: { node: nodeId },
    },
  )
}

/** The command that issued a secret, as its event records it (docs/seeds-and-inventory.md). */
export type SecretVia = 'seed' | 'node token' | 'sync' | 'reconcile'

export interface ApplySecretInput {
  plan: SecretPlan
  node: { id: string; pool: string; region?: string; serverType?: string }
  secretSha256: Buffer
  expiresAt: Date
  /** Who asked (the command's actor, src/cli/actor.ts) and through which command, for the secret's event. */
  actor: string
  via: SecretVia
  now: Date
}

/** Store the secret as planned, inside the caller's transaction (the row already locked). */
export async function applySecretPlan(client: Queryable, input: ApplySecretInput): Promise<void> {
  const { plan, node } = input
  if (plan.mode === 'reissue-enrolled') {
    await upsertDeclaredNode(client, { id: node.id, pool: node.pool, region: node.region, serverType: node.serverType })
    await reissueEnrollmentSecret(client, node.id, input.secretSha256, input.expiresAt)
  } else {
    await upsertDeclaredNode(client, {
      id: node.id,
      pool: node.pool,
      region: node.region,
      serverType: node.serverType,
      status: 'provisioning',
    })
    await issueEnrollmentSecret(client, node.id, input.secretSha256, input.expiresAt)
    await clearSecretReissued(client, node.id)
  }
  // Every secret issued is an event (issue 11); the event names who and when, never the secret or its hash.
  await appendEvent(client, {
    kind: plan.mode === 'provision' ? 'secret_issued' : 'secret_reissued',
    nodeId: node.id,
    at: input.now,
    data: {
      actor: input.actor,
      via: input.via,
      previous_status: plan.previousStatus,
      expires_at: input.expiresAt.toISOString(),
    },
  })
}

/**
 * What a reissue to an enrolled node (live certificate) puts at stake, for the question asked
 * before it: whoever holds the new secret can enroll as the node and replace its agent.
 */
export function reissueAtStake(nodeId: string, status: string): string {
  return `give ${nodeId} (${status}, enrolled) a new enrollment secret: whoever holds it can enroll as ${nodeId}, and that enrollment revokes the certificate its agent uses now`
}
