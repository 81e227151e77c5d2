// The volume of `fleetkit node provision --volume SIZE`, once the server runs: find the volume that
// already carries the node's label (a create whose answer was lost) or create one in the server's
// location, the intent committed before the request; then attach it and poll the action. Each step is
// recorded (migration 0012) and is an event, so a kill at any point and --resume end with one volume.
import type { StatePool } from '../../store/transaction.js'

import { FleetkitError, isFleetkitError } from '../../checks/fleetkit-error.js'
import type { Clock } from '../../config/clock.js'
import type { Definition } from '../../definition/types.js'
import type { Provider } from '../../provider/provider.js'
import type { Server, Volume } from '../../provider/hetzner-types.js'
import { withTransaction } from '../../store/database.js'
import { appendEvent } from '../../store/events.js'
import type { ProvisionRow } from '../../store/provider/provisioning.js'
import { recordVolumeAttached, recordVolumeCreated, recordVolumeIntent } from '../../store/provider/provider-volumes.js'
import { NODE_ID_LABEL, nodeLabels } from '../../provider/create-or-adopt.js'

export interface VolumeStepContext {
  pool: StatePool
  client: Provider
  definition: Definition
  clock: Clock
  sleep: (ms: number) => Promise<void>
  pollMs: number
  progress: (message: string) => void
  /** Test hooks: a throw from one is a kill at that point. */
  beforeVolumeCreate?: () => Promise<void> | void
  afterVolumeStep?: (step: 'created' | 'attached') => Promise<void> | void
}

/** How long a created volume may stay `creating` before its attach is given up. */
const AVAILABLE_WAIT_MS = 10 * 60_000

/** Creates (or adopts) and attaches the row's volume to `server`; returns whether it was adopted. */
export async function volumeStep(ctx: VolumeStepContext, row: ProvisionRow, server: Server): Promise<boolean> {
  const nodeId = row.id
  let volumeId = row.providerVolumeId === null ? undefined : Number(row.providerVolumeId)
  let adopted = false
  if (row.volumeState === 'planned' || row.volumeState === 'requested') {
    const volume = await createOrAdopt(ctx, row, server)
    volumeId = volume.id
    adopted = volume.adopted
    await ctx.afterVolumeStep?.('created')
  }
  if (volumeId !== undefined && row.volumeState !== 'attached') {
    await attach(ctx, nodeId, volumeId, server)
    await ctx.afterVolumeStep?.('attached')
  }
  return adopted
}

async function createOrAdopt(
  ctx: VolumeStepContext,
  row: ProvisionRow,
  server: Server,
): Promise<{ id: number; adopted: boolean }> {
  const { client, pool } = ctx
  const nodeId = row.id
  const labels = nodeLabels(ctx.definition.fleet, nodeId, row.pool)
  ctx.progress(`looking for a volume labelled ${NODE_ID_LABEL}=${nodeId}`)
  const ours = await client.findOwnVolume(nodeId, labels)
  if (ours) {
    await adopt(pool, nodeId, ours, 'found by its labels before creating')
    return { id: ours.id, adopted: true }
  }
  const location = server.datacenter.location.name
  const size = row.volumeSizeGb!
  await withTransaction(pool, async (q) => {
    await recordVolumeIntent(q, nodeId)
    await appendEvent(q, { kind: 'provision_volume_create_requested', nodeId, data: { size_gb: size, location } })
  })
  await ctx.beforeVolumeCreate?.()
  ctx.progress(`creating volume ${nodeId} (${size} GB in ${location})`)
  const created = await client.createVolume({
    name: nodeId,
    size,
    location,
    labels,
  })
  if (created.adopted) {
    await adopt(pool, nodeId, created.volume, 'found by its label after an ambiguous create')
    return { id: created.volume.id, adopted: true }
  }
  await withTransaction(pool, async (q) => {
    await recordVolumeCreated(q, nodeId, { id: created.volume.id, linuxDevice: created.volume.linux_device })
    await appendEvent(q, {
      kind: 'provision_volume_created',
      nodeId,
      data: { volume_id: created.volume.id, size_gb: size, location, linux_device: created.volume.linux_device },
    })
  })
  return { id: created.volume.id, adopted: false }
}

async function adopt(pool: StatePool, nodeId: string, volume: Volume, how: string): Promise<void> {
  await withTransaction(pool, async (q) => {
    await recordVolumeCreated(q, nodeId, { id: volume.id, linuxDevice: volume.linux_device })
    await appendEvent(q, {
      kind: 'provision_volume_adopted',
      nodeId,
      data: { volume_id: volume.id, size_gb: volume.size, linux_device: volume.linux_device, how },
    })
  })
}

/** Attaches the volume once it is available; one already attached to this server (a lost answer) counts. */
async function attach(ctx: VolumeStepContext, nodeId: string, volumeId: number, server: Server): Promise<void> {
  let linuxDevice: string
  try {
    const started = ctx.clock.now().getTime()
    let volume: Volume | undefined
    for (;;) {
      volume = await ctx.client.getVolume(volumeId)
      if (!volume) throw attachFailed(nodeId, volumeId, server.id, 'it no longer exists at the provider', 'not_found')
      if (volume.status === 'available') break
      if (ctx.clock.now().getTime() - started >= AVAILABLE_WAIT_MS)
        throw attachFailed(nodeId, volumeId, server.id, `it is still ${volume.status}`, 'timeout')
      ctx.progress(`volume ${volumeId} is ${volume.status}`)
      await ctx.sleep(ctx.pollMs)
    }
    linuxDevice = volume.linux_device
    if (volume.server !== server.id) {
      if (volume.server !== null)
        throw attachFailed(nodeId, volumeId, server.id, `it is attached to server ${volume.server}`, 'attached')
      ctx.progress(`attaching volume ${volumeId} to server ${server.id}`)
      const action = await ctx.client.attachVolume(volumeId, server.id)
      await ctx.client.waitForActions([action.id], { pollMs: ctx.pollMs })
    }
  } catch (error) {
    // The provider's failures become this step's code; anything else is a bug and stays one.
    if (!isFleetkitError(error) || error.code === 'PROVIDER_VOLUME_ATTACH_FAILED') throw error
    const providerCode = String(error.data?.providerCode ?? error.code)
    throw attachFailed(nodeId, volumeId, server.id, `${error.code}: ${error.message}`, providerCode, error)
  }
  await withTransaction(ctx.pool, async (q) => {
    await recordVolumeAttached(q, nodeId)
    await appendEvent(q, {
      kind: 'provision_volume_attached',
      nodeId,
      data: { volume_id: volumeId, server_id: server.id, linux_device: linuxDevice },
    })
  })
}

function attachFailed(
  nodeId: string,
  volumeId: number,
  serverId: number,
  why: string,
  providerCode: string,
  cause?: unknown,
): FleetkitError {
  return new FleetkitError(
    'PROVIDER_VOLUME_ATTACH_FAILED',
    `volume ${volumeId} of ${nodeId} was not attached to server ${serverId}: ${why}; the volume is recorded, --resume attaches it`,
    {
      ...(cause === undefined ? {} : { cause }),
      actions: [`fleetkit node provision --resume ${nodeId}`, `fleetkit node show ${nodeId}`],
      data: { node: nodeId, volumeId, serverId, providerCode },
    },
  )
}
