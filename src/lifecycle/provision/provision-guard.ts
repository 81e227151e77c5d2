// What a `node provision` run may start on and replace: the rules checked on the row read at the
// start, and again under the node's lock in the transaction that acts on them (the start, each create
// intent), since `fleetkit seed` and `node token` do not take the run lock and may change the node
// while the run talks to the provider.
import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { ProvisionRow } from '../../store/provider/provisioning.js'
import { changedConcurrently } from '../node/secret-reissue.js'
import { assertRekeyAllowed, shortKey } from '../seed/seed-host-key.js'
import { stateConflict } from '../node/node-transition.js'

/** The statuses a new run takes a row over from (a row that does not exist is inserted). */
const PROVISIONABLE = ['parked', 'failed'] as const

/** The host key decision of a run: the key pinned when it started and whether --rekey replaces it. */
export interface HostKeyDecision {
  hostKey: string | null
  rekey: boolean
}

/**
 * A retired node is never provisioned again, nor its run resumed: it was decommissioned (its
 * certificates revoked, its server deleted or owed a delete), so its id is done; a new id is the way.
 */
export function assertNotRetired(nodeId: string, row: ProvisionRow | undefined, resume: boolean): void {
  if (row?.status !== 'retired') return
  const server =
    row.providerServerId === null
      ? ''
      : row.deletePending
        ? `, its server ${row.providerServerId} still owed a delete`
        : `, its server ${row.providerServerId} deleted`
  throw new FleetkitError(
    'NODE_STATE_CONFLICT',
    `cannot ${resume ? 'resume the provisioning of' : 'provision'} ${nodeId}: it is retired (decommissioned${server}), and a retired node id is never provisioned again; nothing changed`,
    {
      actions: [
        'declare a new node id in fleet.yaml, then: fleetkit node provision NEW-ID',
        ...(row.deletePending ? [`fleetkit node decommission ${nodeId}   (retries the delete it owes)`] : []),
        `fleetkit node show ${nodeId}`,
      ],
      data: { nodeId, status: row.status, allowed: [...PROVISIONABLE] },
    },
  )
}

/** The steps of a `node provision` run under way: its server is being created or booting with its own seed. */
const RUN_UNDER_WAY: readonly string[] = ['pending', 'server_requested', 'awaiting_enrollment']

/**
 * `fleetkit seed` and `node token` on a node whose `node provision` run is under way: a new secret or host key
 * would replace the one in the seed that run gives (or gave) its server, stranding it. Checked on the row
 * read first and again under the node's row lock, in the transaction that would store the secret.
 */
export function assertNoProvisionRun(nodeId: string, provisionState: string | null | undefined, command: string): void {
  if (provisionState == null || !RUN_UNDER_WAY.includes(provisionState)) return
  throw new FleetkitError(
    'PROVISION_IN_PROGRESS',
    `node ${nodeId} is being provisioned by fleetkit node provision (step ${provisionState}): ${command} would replace the secret or host key of the seed that run gives its server, which could then never enroll or be reached; nothing changed`,
    {
      actions: [
        `fleetkit node provision --resume ${nodeId}   (waits for the run's server to enroll)`,
        `fleetkit node show ${nodeId}`,
        `if that server is never to enroll: fleetkit node decommission ${nodeId}, and a new node id`,
      ],
      data: { node: nodeId, state: provisionState },
    },
  )
}

/** A new run: the node is not in the state, or parked or failed with no provisioning run of its own. */
export function assertProvisionable(nodeId: string, row: ProvisionRow | undefined): void {
  assertNotRetired(nodeId, row, false)
  if (row?.provisionState)
    throw new FleetkitError(
      'PROVISION_IN_PROGRESS',
      `node ${nodeId} was provisioned before (step ${row.provisionState}); nothing changed`,
      {
        actions: [`fleetkit node provision --resume ${nodeId}`, `fleetkit node show ${nodeId}`],
        data: { node: nodeId, state: row.provisionState },
      },
    )
  if (row && !(PROVISIONABLE as readonly string[]).includes(row.status))
    throw stateConflict(row, 'provision', PROVISIONABLE)
}

/**
 * The start's host key rule, under the lock: a pinned key is replaced only with --rekey, and only
 * the key the run read before its provider requests (another run's newer key is not replaced unseen).
 */
export function assertSameHostKey(
  nodeId: string,
  decision: HostKeyDecision,
  row: ProvisionRow | undefined,
  declared: string | undefined,
): void {
  const current = row?.hostKeyPublic ?? declared ?? null
  assertRekeyAllowed(nodeId, current, decision.rekey, 'provision', undefined, declared)
  if (current !== decision.hostKey)
    throw changedConcurrently(nodeId, 'SSH host key', `fleetkit node provision ${nodeId} --rekey`)
}

/**
 * Before a create intent, under the lock: the node still waits for this run's server. An agent that
 * enrolled meanwhile with another seed's secret made it active; a new secret would make it provisioning again.
 */
export function assertStillPending(row: ProvisionRow): void {
  if (row.status !== 'provisioning' || row.provisionState !== 'pending')
    throw stateConflict(row, 'create a server for', ['provisioning'])
}

/**
 * Before a create intent stores its secret and key, under the lock: the key pinned now is the one the
 * run decided about at its start (none, or the one --rekey replaces) or the one an earlier intent of
 * this run pinned; else a seed pinned it while the run was under way and it is HOST_KEY_PINNED.
 */
export function assertHostKeyIsTheRuns(nodeId: string, row: ProvisionRow, declared: string | undefined): void {
  const plan = row.plan
  // A plan recorded before the decision was (an older fleetkit's run): nothing to compare with.
  if (plan?.hostKey === undefined) return
  const current = row.hostKeyPublic ?? declared ?? null
  if (current === null || current === (plan.pinnedHostKey ?? null)) return
  if (plan.hostKey?.rekey === true && current === plan.hostKey.hostKey) return
  throw new FleetkitError(
    'HOST_KEY_PINNED',
    `node ${nodeId} has a pinned SSH host key (${shortKey(current)}...) that its provisioning run did not start with or pin (a seed made while it ran); a server created now would get a new one, so nothing was created or stored`,
    {
      actions: [
        `fleetkit events --node ${nodeId}   (host_key_pinned or host_key_replaced names who pinned it)`,
        `fleetkit node decommission ${nodeId}   (ends this run; then provision a new node id)`,
      ],
      data: { node: nodeId },
    },
  )
}

/**
 * Before a create intent, under the lock: a pending secret (unused, unexpired at `now`) is never
 * replaced unless the run stored it itself (`own`, a resumed intent's): a seed or token given out
 * meanwhile would be made useless, stranding the host booting from it. `retry` goes on once it expired.
 */
export function assertNoOtherPendingSecret(
  nodeId: string,
  row: ProvisionRow | undefined,
  own: boolean,
  now: Date,
  retry: string,
): void {
  if (!row || own) return
  const expiresAt = row.enrollmentSecretExpiresAt
  if (expiresAt === null || row.enrollmentSecretUsedAt !== null || expiresAt.getTime() <= now.getTime()) return
  const until = expiresAt.toISOString()
  throw new FleetkitError(
    'NODE_SECRET_PENDING',
    `node ${nodeId} has an unused enrollment secret valid until ${until} that its provisioning run did not issue (a seed or token given out while it ran): a server created now would get a new one and make that seed or token useless; nothing was created or stored`,
    {
      actions: [
        `fleetkit events --node ${nodeId}   (secret_issued names who)`,
        `${retry}   (once it expired at ${until}, if that seed or token is not used)`,
      ],
      data: { node: nodeId, status: row.status, secretExpiresAt: until },
    },
  )
}
