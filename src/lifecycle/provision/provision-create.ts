// Step `pending` of `fleetkit node provision`: converge the pool firewall, then either adopt the
// server that already carries the node's label (a create whose answer was lost, a killed run) or
// create one, the intent (secret hash, candidate, capacity) committed before each create request.
import type { StatePool } from '../../store/transaction.js'

import { FleetkitError, isFleetkitError } from '../../checks/fleetkit-error.js'
import type { Clock } from '../../config/clock.js'
import type { Rng } from '../../config/rng.js'
import type { HostPolicy } from '../../definition/host-policy.js'
import type { Definition } from '../../definition/types.js'
import { NODE_ID_LABEL, nodeLabels } from '../../provider/create-or-adopt.js'
import type { Provider } from '../../provider/provider.js'
import type { Server } from '../../provider/hetzner-types.js'
import { convergePoolFirewall, firewallName, poolFirewallRules } from '../../provider/pool-firewall.js'
import { withTransaction } from '../../store/database.js'
import { issueEnrollmentSecret } from '../../store/nodes/enrollment-secrets.js'
import { appendEvent } from '../../store/events.js'
import {
  lockProvisionRow,
  type ProvisionRow,
  recordCreateIntent,
  recordServer,
} from '../../store/provider/provisioning.js'
import { capacityOf } from './provision-plan.js'
import { assertHostKeyIsTheRuns, assertNoOtherPendingSecret, assertStillPending } from './provision-guard.js'
import { renderProvisionSeed } from './provision-seed.js'
import type { SeedFiles } from '../seed/seed-files.js'
import { pinProvisionHostKey } from '../seed/seed-host-key.js'

export interface CreateContext {
  pool: StatePool
  client: Provider
  definition: Definition
  files: SeedFiles
  policy: HostPolicy
  clock: Clock
  rng: Rng
  secretTtlMs: number
  progress: (message: string) => void
  /** Who provisions, recorded in the host key's event. */
  actor: string | null
  /** Test hook: runs after the create intent committed, before the create request (a kill there). */
  beforeCreate?: () => Promise<void> | void
}

export interface CreateOutcome {
  serverId: number
  firewallId: number
  /** The server existed already (found by its fleetkit.node_id label) and was adopted. */
  adopted: boolean
  /** Candidates left behind on resource_unavailable. */
  moves: { from: { region: string; type: string }; to: { region: string; type: string } }[]
}

export async function createStep(ctx: CreateContext, row: ProvisionRow): Promise<CreateOutcome> {
  const { client, definition, pool } = ctx
  const nodeId = row.id
  const plan = row.plan!
  const poolDef = definition.pools[row.pool]
  ctx.progress(`converging the provider firewall ${firewallName(row.pool)}`)
  const rules = poolFirewallRules(definition.operators.cidrs, poolDef?.ingress === true)
  const firewall = await convergePoolFirewall(client, definition.fleet, row.pool, rules)

  const labels = nodeLabels(definition.fleet, nodeId, row.pool)
  ctx.progress(`looking for a server labelled ${NODE_ID_LABEL}=${nodeId}`)
  // Ours by its labels, or holding its name with them (a concurrent run's); a stranger holding it is a conflict.
  const ours = await client.findOwnServer(nodeId, labels)
  if (ours) {
    await adopt(pool, nodeId, ours, 'found by its labels before creating')
    return { serverId: ours.id, firewallId: firewall.id, adopted: true, moves: [] }
  }

  const placementGroup = plan.placementGroup ? await placementGroupId(ctx, plan.placementGroup) : undefined
  const types = new Map((await client.listServerTypes()).map((t) => [t.name, t]))
  const seed = renderProvisionSeed(definition, nodeId, ctx.files, ctx.rng)
  const sshKeys = definition.providers?.hetzner?.sshKeys ?? []
  const moves: CreateOutcome['moves'] = []
  for (let i = plan.attempt; i < plan.candidates.length; i++) {
    const candidate = plan.candidates[i]!
    const type = types.get(candidate.type)
    if (!type) throw new FleetkitError('PROVISION_INPUT_INVALID', `server type ${candidate.type} no longer exists`)
    const expiresAt = new Date(ctx.clock.now().getTime() + ctx.secretTtlMs)
    // The intent first: a kill after this and before the answer is found again by the label.
    await withTransaction(pool, async (q) => {
      // Under the node's lock, fresh run or --resume alike: replace only the secret and key this run
      // stored itself, or the key it started out to replace; never a seed's or token's given out meanwhile.
      const locked = (await lockProvisionRow(q, nodeId))!
      assertStillPending(locked)
      const declared = definition.nodes.find((n) => n.id === nodeId)?.hostKey
      if (seed.hostKeyPublic) assertHostKeyIsTheRuns(nodeId, locked, declared)
      const resume = `fleetkit node provision --resume ${nodeId}`
      // A plan recorded by an older fleetkit names neither: its run's own secret is not refused.
      const own = locked.secretIsTheRuns || locked.plan?.hostKey === undefined
      assertNoOtherPendingSecret(nodeId, locked, own, ctx.clock.now(), resume)
      await issueEnrollmentSecret(q, nodeId, seed.secretSha256, expiresAt)
      if (seed.hostKeyPublic) {
        const current = locked.hostKeyPublic ?? declared ?? null
        await pinProvisionHostKey(q, {
          nodeId,
          declared,
          // Decided above: the key there now is the run's to replace.
          planned: { hostKey: current, rekey: true },
          hostKeyPublic: seed.hostKeyPublic,
          actor: ctx.actor,
          now: ctx.clock.now(),
        })
      }
      await recordCreateIntent(q, nodeId, {
        attempt: i,
        ...candidate,
        capacity: capacityOf(type, ctx.policy),
        pinnedHostKey: seed.hostKeyPublic ?? null,
      })
      await appendEvent(q, {
        kind: 'provision_create_requested',
        nodeId,
        data: { region: candidate.region, type: candidate.type, image: plan.image, attempt: i },
      })
    })
    await ctx.beforeCreate?.()
    ctx.progress(`creating server ${nodeId} (${candidate.type} in ${candidate.region}, ${plan.image})`)
    try {
      const created = await client.createServer({
        name: nodeId,
        server_type: candidate.type,
        image: plan.image,
        location: candidate.region,
        ...(sshKeys.length > 0 ? { ssh_keys: sshKeys } : {}),
        user_data: seed.userData,
        labels,
        firewalls: [{ firewall: firewall.id }],
        ...(placementGroup === undefined ? {} : { placement_group: placementGroup }),
        start_after_create: true,
      })
      if (created.adopted) await adopt(pool, nodeId, created.server, 'found by its label after an ambiguous create')
      else
        await withTransaction(pool, async (q) => {
          await recordServer(q, nodeId, 'server_requested', { serverId: created.server.id })
          await appendEvent(q, {
            kind: 'provision_server_created',
            nodeId,
            data: { server_id: created.server.id, region: candidate.region, type: candidate.type },
          })
        })
      return { serverId: created.server.id, firewallId: firewall.id, adopted: created.adopted, moves }
    } catch (error) {
      const next = plan.candidates[i + 1]
      if (!isFleetkitError(error) || error.code !== 'PROVIDER_TYPE_UNAVAILABLE' || !next) throw error
      moves.push({ from: candidate, to: next })
      ctx.progress(`${candidate.type} is unavailable in ${candidate.region}: trying ${next.type} in ${next.region}`)
      await appendEvent(pool, {
        kind: 'provision_placement_moved',
        nodeId,
        data: { from: candidate, to: next, provider_code: 'resource_unavailable' },
      })
    }
  }
  throw new Error('createStep: no candidate left') // unreachable: the last candidate's failure is thrown
}

async function adopt(pool: StatePool, nodeId: string, server: Server, how: string): Promise<void> {
  await withTransaction(pool, async (q) => {
    await recordServer(q, nodeId, 'server_requested', { serverId: server.id })
    await appendEvent(q, { kind: 'provision_server_adopted', nodeId, data: { server_id: server.id, how } })
  })
}

async function placementGroupId(ctx: CreateContext, name: string): Promise<number> {
  const [existing] = await ctx.client.listPlacementGroups({ name })
  if (existing) return existing.id
  const created = await ctx.client.createPlacementGroup({ name, labels: { 'fleetkit.fleet': ctx.definition.fleet } })
  return created.id
}
