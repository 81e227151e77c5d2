// `fleetkit node replace NODE [--as NEW]` (spec 06): provision a like-for-like node (the old one's
// pool, region, server type and image; its declaration copied under the new id), wait for the new
// node's enrollment, then drain the old one. Running it again resumes the replacement's provisioning.
import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Definition, NodeDeclaration } from '../../definition/types.js'
import { getProvisionRow } from '../../store/provider/provisioning.js'
import { type DrainResult, drainNode } from '../node/node-drain.js'
import { type ProvisionOptions, provisionNode } from './node-provision.js'
import type { ProvisionResult } from './provision-result.js'
import { unknownNode } from '../node/node-transition.js'
import { asOnlyRun } from '../node/node-run.js'

export interface ReplaceResult {
  /** @minLength 1 */
  replaced: string
  replacement: ProvisionResult
  drain: DrainResult
}

/** The replacement's id without --as: build-1 -> build-1-r2 -> build-1-r3. */
function replacementId(oldId: string): string {
  const match = /^(.*)-r(\d+)$/.exec(oldId)
  const base = match ? match[1]! : oldId
  const next = match ? Number(match[2]) + 1 : 2
  const suffix = `-r${next}`
  return `${base.slice(0, 63 - suffix.length).replace(/-+$/, '')}${suffix}`
}

export async function replaceNode(
  options: Omit<ProvisionOptions, 'nodeId' | 'request' | 'resume' | 'replaces'> & {
    oldId: string
    newId?: string
    actor: string
  },
): Promise<ReplaceResult> {
  // Held on the old node for the whole run (provisionNode holds the new one's): one replace of a node at once.
  return asOnlyRun(options.pool, options.oldId, `node replace ${options.oldId}`, () => replaceHeld(options))
}

async function replaceHeld(options: Parameters<typeof replaceNode>[0]): Promise<ReplaceResult> {
  const { pool, oldId } = options
  const old = await getProvisionRow(pool, oldId)
  if (!old) throw await unknownNode(pool, oldId)
  if (old.provider !== 'hetzner' || old.providerServerId === null) {
    throw new FleetkitError(
      'NODE_NOT_PROVIDER_MANAGED',
      `${oldId} has no provider server fleetkit created, so there is nothing like-for-like to provision; nothing changed`,
      {
        actions: [`fleetkit node provision NEW-ID   (declare it in fleet.yaml first)`, `fleetkit node drain ${oldId}`],
        data: { node: oldId },
      },
    )
  }
  if (options.waitMs === 0)
    throw new FleetkitError(
      'USAGE_INVALID',
      'node replace waits for the enrollment before it drains: --wait must not be 0',
    )
  const newId = options.newId ?? replacementId(oldId)
  const existing = await getProvisionRow(pool, newId)
  const resume = existing?.replacesNodeId === oldId && existing.provisionState !== null
  options.progress?.(`${resume ? 'resuming' : 'provisioning'} ${newId} to replace ${oldId}`)
  const replacement = await provisionNode({
    ...options,
    nodeId: newId,
    definition: withReplacement(options.definition, old, newId),
    request: {
      regions: [old.region!],
      types: [old.serverType!],
      ...(old.image ? { image: old.image } : {}),
    },
    resume,
    replaces: oldId,
  })
  options.progress?.(`${newId} enrolled: draining ${oldId}`)
  const drain = await drainNode({ pool, nodeId: oldId, actor: options.actor, clock: options.clock })
  return { replaced: oldId, replacement, drain }
}

/** The definition with NEW declared as a copy of OLD's declaration (its own host key, none pinned). */
function withReplacement(definition: Definition, old: { id: string; pool: string }, newId: string): Definition {
  if (definition.nodes.some((n) => n.id === newId)) return definition
  const declared = definition.nodes.find((n) => n.id === old.id)
  const { hostKey: _pinned, ...copied }: NodeDeclaration = declared ?? { id: old.id, pool: old.pool, state: 'active' }
  return { ...definition, nodes: [...definition.nodes, { ...copied, id: newId }] }
}
