// `fleetkit node provision NODE` and `--resume NODE` (spec 06): a durable state machine in the
// node's row. pending (row inserted, plan validated) -> server_requested (create sent, or the
// labelled server adopted) -> awaiting_enrollment (the server runs, its --volume created and
// attached with steps of their own, provision-volume.ts; addresses recorded) ->
// enrolled (the gateway consumed the secret), or failed when the secret expires first. Every step
// is committed before the next side effect, so a kill at any point and --resume ends with one server.
import type { StatePool } from '../../store/transaction.js'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Clock } from '../../config/clock.js'
import type { Rng } from '../../config/rng.js'
import type { HostPolicy } from '../../definition/host-policy.js'
import type { Definition, NodeDeclaration } from '../../definition/types.js'
import { nodeLabels } from '../../provider/create-or-adopt.js'
import type { Provider } from '../../provider/provider.js'
import { recordedId } from '../../provider/hetzner-readers.js'
import type { Server } from '../../provider/hetzner-types.js'
import { withTransaction } from '../../store/database.js'
import { appendEvent } from '../../store/events.js'
import { recordPoolPolicies } from '../../store/nodes/pool-policies.js'
import {
  failProvisioning,
  getProvisionRow,
  lockProvisionRow,
  type ProvisionRow,
  type ProvisionStep,
  recordServer,
  startProvisioning,
} from '../../store/provider/provisioning.js'
import { nodeTarget } from '../../render/seed-documents.js'
import { asOnlyRun } from '../node/node-run.js'
import { assertRekeyAllowed } from '../seed/seed-host-key.js'
import { type CreateOutcome, createStep } from './provision-create.js'
import { declaredNode, type PlanRequest, planProvision, validatePlan } from './provision-plan.js'
import { volumeStep } from './provision-volume.js'
import { assertNotRetired, assertProvisionable, assertSameHostKey, type HostKeyDecision } from './provision-guard.js'
import { expired, type ProvisionResult, result, waitTimeout } from './provision-result.js'
import type { SeedFiles } from '../seed/seed-files.js'

export interface ProvisionOptions {
  pool: StatePool
  nodeId: string
  definition: Definition
  files: SeedFiles
  client: Provider
  policy: HostPolicy
  request: PlanRequest
  resume: boolean
  /** Replace the SSH host key pinned in fleet.yaml or the state (refused with HOST_KEY_PINNED otherwise). */
  rekey?: boolean
  /** Who provisions (the command's actor), recorded in the host key's event. */
  actor?: string
  /** The node this one replaces (node replace). */
  replaces?: string
  /** How long to wait for the server to run and the agent to enroll; 0 returns at awaiting_enrollment. */
  waitMs: number
  pollMs?: number
  secretTtlMs?: number
  clock: Clock
  rng: Rng
  sleep: (ms: number) => Promise<void>
  progress?: (message: string) => void
  /** Test hooks: a throw from one is a kill at that point (after the step committed). */
  afterStep?: (step: ProvisionStep) => Promise<void> | void
  beforeCreate?: () => Promise<void> | void
  beforeVolumeCreate?: () => Promise<void> | void
  afterVolumeStep?: (step: 'created' | 'attached') => Promise<void> | void
}

const DEFAULT_SECRET_TTL_MS = 15 * 60_000
/** How long a created server may take to run, however short --wait is. */
const RUNNING_WAIT_MS = 10 * 60_000

/**
 * The run holds the node's run lock from before its first provider request to its end: of runs at
 * once on one node (provision, --resume, replace, decommission) exactly one acts, the others are
 * NODE_BUSY, so one create is sent and the secret stored is the one in that server's seed.
 */
export async function provisionNode(options: ProvisionOptions): Promise<ProvisionResult> {
  const declaration = declaredNode(options.definition, options.nodeId)
  const command = options.replaces
    ? `node replace ${options.replaces}`
    : `node provision ${options.resume ? '--resume ' : ''}${options.nodeId}`
  return asOnlyRun(options.pool, options.nodeId, command, () => provisionHeld(options, declaration))
}

async function provisionHeld(options: ProvisionOptions, declaration: NodeDeclaration): Promise<ProvisionResult> {
  const { pool, nodeId, definition, client } = options
  const progress = options.progress ?? (() => {})
  let row = await getProvisionRow(pool, nodeId)
  assertNotRetired(nodeId, row, options.resume)
  if (!options.resume) {
    assertProvisionable(nodeId, row)
    // The seed's rule, before any provider request: a pinned host key is replaced only with --rekey.
    let hostKey: HostKeyDecision | null = null
    if (nodeTarget(definition, nodeId, undefined).sshUser !== undefined) {
      hostKey = { hostKey: row?.hostKeyPublic ?? declaration.hostKey ?? null, rekey: options.rekey === true }
      assertRekeyAllowed(nodeId, hostKey.hostKey, hostKey.rekey, 'provision', undefined, declaration.hostKey)
    }
    // The decision is part of the plan: a --resume continues it and replaces nothing else.
    const plan = { ...planProvision(definition, declaration, options.request), hostKey }
    progress(`validating ${plan.candidates.length} candidate(s) and image ${plan.image} with the provider`)
    await validatePlan(client, plan, definition.providers?.hetzner?.sshKeys ?? [])
    await withTransaction(pool, async (q) => {
      // Again under the node's lock: a seed or node token of it (they take no run lock) may have
      // registered it (provisioning: refused here as it is above) or pinned a key while the provider was asked.
      const locked = await lockProvisionRow(q, nodeId)
      assertProvisionable(nodeId, locked)
      if (hostKey) assertSameHostKey(nodeId, hostKey, locked, declaration.hostKey)
      await startProvisioning(q, {
        id: nodeId,
        pool: declaration.pool,
        plan,
        replaces: options.replaces,
        volumeSizeGb: options.request.volumeSizeGb ?? null,
      })
      // What the sweep needs of the pools (stateful): it has no definition of its own.
      await recordPoolPolicies(q, definition.pools)
      await appendEvent(q, {
        kind: 'provision_started',
        nodeId,
        data: { plan, replaces: options.replaces ?? null, volume_size_gb: options.request.volumeSizeGb ?? null },
      })
    })
    progress(`${nodeId}: pending`)
    await options.afterStep?.('pending')
  } else if (!row?.provisionState || !row.plan) {
    throw new FleetkitError('PROVISION_NOT_STARTED', `node ${nodeId} has no provisioning run to resume`, {
      actions: [`fleetkit node provision ${nodeId}`],
      data: { node: nodeId },
    })
  }
  let outcome: Partial<CreateOutcome> & { volumeAdopted?: boolean } = {}
  for (;;) {
    row = (await getProvisionRow(pool, nodeId))!
    switch (row.provisionState) {
      case 'pending':
        outcome = await createStep(
          {
            pool,
            client,
            definition,
            files: options.files,
            policy: options.policy,
            clock: options.clock,
            rng: options.rng,
            secretTtlMs: options.secretTtlMs ?? DEFAULT_SECRET_TTL_MS,
            progress,
            actor: options.actor ?? null,
            ...(options.beforeCreate ? { beforeCreate: options.beforeCreate } : {}),
          },
          row,
        )
        progress(`${nodeId}: server_requested (server ${outcome.serverId}${outcome.adopted ? ', adopted' : ''})`)
        await options.afterStep?.('server_requested')
        break
      case 'server_requested': {
        const server = await waitRunning(options, row, progress)
        if (row.volumeState === 'planned' || row.volumeState === 'requested' || row.volumeState === 'created')
          outcome.volumeAdopted = await volumeStep(
            {
              pool,
              client,
              definition,
              clock: options.clock,
              sleep: options.sleep,
              pollMs: options.pollMs ?? 2000,
              progress,
              ...(options.beforeVolumeCreate ? { beforeVolumeCreate: options.beforeVolumeCreate } : {}),
              ...(options.afterVolumeStep ? { afterVolumeStep: options.afterVolumeStep } : {}),
            },
            row,
            server,
          )
        await recordRunning(options, row, server)
        progress(`${nodeId}: awaiting_enrollment`)
        await options.afterStep?.('awaiting_enrollment')
        break
      }
      case 'awaiting_enrollment':
        if (options.waitMs === 0) return result(row, outcome)
        await waitEnrolled(options, progress)
        break
      case 'enrolled':
        progress(`${nodeId}: enrolled`)
        return result(row, outcome)
      default:
        throw expired(nodeId, row)
    }
  }
}

/** Polls the server until it runs. */
async function waitRunning(
  options: ProvisionOptions,
  row: ProvisionRow,
  progress: (m: string) => void,
): Promise<Server> {
  const serverId = recordedId(row.providerServerId) ?? (await serverByLabel(options, row))
  const started = options.clock.now().getTime()
  for (;;) {
    const server = await options.client.getServer(serverId)
    if (!server)
      throw new FleetkitError('PROVIDER_ERROR', `server ${serverId} of ${row.id} no longer exists at the provider`, {
        actions: [`fleetkit node decommission ${row.id}`, `fleetkit node show ${row.id}`],
        data: { node: row.id, serverId },
      })
    if (server.status === 'running') return server
    if (options.clock.now().getTime() - started >= Math.max(options.waitMs, RUNNING_WAIT_MS))
      throw waitTimeout(row.id, `server ${serverId} to run (it is ${server.status})`)
    progress(`server ${serverId} is ${server.status}`)
    await options.sleep(options.pollMs ?? 2000)
  }
}

/**
 * The node's server when the recorded ID is unusable (a create answer without one, recorded before
 * answers were read): found by its labels and recorded, never asked for as /servers/NaN.
 */
async function serverByLabel(options: ProvisionOptions, row: ProvisionRow): Promise<number> {
  const server = await options.client.findOwnServer(row.id, nodeLabels(options.definition.fleet, row.id, row.pool))
  if (!server)
    throw new FleetkitError(
      'PROVIDER_ERROR',
      `${row.id} recorded no usable server id (${String(row.providerServerId)}) and no server carries its labels`,
      {
        actions: [`fleetkit node decommission ${row.id}`, `fleetkit node show ${row.id}`],
        data: { node: row.id, recordedServerId: row.providerServerId },
      },
    )
  await withTransaction(options.pool, async (q) => {
    await recordServer(q, row.id, 'server_requested', { serverId: server.id })
    await appendEvent(q, {
      kind: 'provision_server_adopted',
      nodeId: row.id,
      data: { server_id: server.id, how: 'found by its labels: the recorded id was unusable' },
    })
  })
  return server.id
}

/** The running server's addresses (and its volume attached): step awaiting_enrollment. */
async function recordRunning(options: ProvisionOptions, row: ProvisionRow, server: Server): Promise<void> {
  await withTransaction(options.pool, async (q) => {
    await recordServer(q, row.id, 'awaiting_enrollment', {
      serverId: server.id,
      region: server.datacenter.location.name,
      type: server.server_type.name,
      image: server.image?.name ?? null,
      publicIpv4: server.public_net.ipv4?.ip ?? null,
      publicIpv6: server.public_net.ipv6?.ip.replace(/\/\d+$/, '') ?? null,
      privateIpv4: server.private_net[0]?.ip ?? null,
    })
    await appendEvent(q, { kind: 'provision_server_running', nodeId: row.id, data: { server_id: server.id } })
  })
}

/** Polls the store until the gateway marks the node enrolled, the secret expires, or --wait ends. */
async function waitEnrolled(options: ProvisionOptions, progress: (m: string) => void): Promise<void> {
  const { pool, nodeId, clock } = options
  const started = clock.now().getTime()
  for (;;) {
    const row = (await getProvisionRow(pool, nodeId))!
    if (row.provisionState !== 'awaiting_enrollment') return
    const expiresAt = row.enrollmentSecretExpiresAt?.getTime() ?? 0
    if (row.enrollmentSecretUsedAt === null && expiresAt <= clock.now().getTime()) {
      const message = `the enrollment secret of ${nodeId} expired at ${new Date(expiresAt).toISOString()} before its agent enrolled`
      await withTransaction(pool, async (q) => {
        await failProvisioning(q, nodeId, message)
        await appendEvent(q, { kind: 'provision_failed', nodeId, data: { code: 'ENROLLMENT_EXPIRED' } })
      })
      throw expired(nodeId, row)
    }
    if (clock.now().getTime() - started >= options.waitMs) throw waitTimeout(nodeId, 'its agent to enroll')
    progress(`waiting for ${nodeId} to enroll (secret valid until ${new Date(expiresAt).toISOString()})`)
    await options.sleep(options.pollMs ?? 2000)
  }
}
