// The volume half of `fleetkit node decommission`: after the retirement committed, detach the node's
// volume (action polled) and keep it, or with --delete-volume delete it once detached. What is left to
// do is the row's volume_state (migration 0012), so running decommission again retries a failed step.
import type { StatePool } from '../../store/transaction.js'

import { FleetkitError, isFleetkitError } from '../../checks/fleetkit-error.js'
import type { Provider } from '../../provider/provider.js'
import { withTransaction } from '../../store/database.js'
import { appendEvent } from '../../store/events.js'
import {
  forgetVolumeRequest,
  recordVolumeCreated,
  recordVolumeDeleted,
  recordVolumeDetached,
} from '../../store/provider/provider-volumes.js'
import type { ProvisionRow } from '../../store/provider/provisioning.js'
import { NODE_ID_LABEL } from '../../provider/create-or-adopt.js'
import { recordedId } from '../../provider/hetzner-readers.js'

export interface VolumeRelease {
  /** @asType integer */
  id: number
  state: 'detached' | 'deleted'
  /** True when the volume (and its data) is kept: detached only, without --delete-volume. */
  kept: boolean
  /**
   * The provider no longer had it under this node's label: gone (a 404), or its ID now names a volume labelled
   * for another node (a local cloud restarted numbers its volumes anew), which was left alone. Recorded deleted.
   */
  alreadyGone?: { labelledFor?: string | null }
}

/** Whether the node's volume still has to be detached, or (with --delete-volume) deleted. */
export function owesVolumeRelease(row: ProvisionRow, deleteVolume: boolean): boolean {
  const state = row.volumeState
  return state === 'requested' || state === 'created' || state === 'attached' || (deleteVolume && state === 'detached')
}

/**
 * Detaches the node's volume (a volume already detached counts; one already gone is recorded deleted).
 * Undefined when the volume was only requested and the provider never made it.
 */
export async function detachNodeVolume(
  pool: StatePool,
  client: Provider,
  row: ProvisionRow,
  options: { deleteVolume: boolean; pollMs?: number },
): Promise<VolumeRelease | undefined> {
  const nodeId = row.id
  const kept = !options.deleteVolume
  // None recorded, or a value that is not an ID: found by its label, never sent as NaN.
  let volumeId = recordedId(row.providerVolumeId)
  // Only the provider's failures are this step's code; the state's own keep theirs.
  const provider = <T>(call: () => Promise<T>) =>
    call().catch((error: unknown) => {
      if (!isFleetkitError(error)) throw error
      throw new FleetkitError('PROVIDER_VOLUME_DETACH_FAILED', ...releaseFailure('detach', row, volumeId, error))
    })
  if (row.volumeState === 'detached') return { id: volumeId!, state: 'detached', kept }
  if (volumeId === undefined) {
    // Requested before a kill (the create may have happened), or recorded unusably: its label finds it.
    const [found] = await provider(() => client.listVolumes({ labelSelector: `${NODE_ID_LABEL}=${nodeId}` }))
    if (!found) {
      await forgetVolumeRequest(pool, nodeId)
      return undefined
    }
    volumeId = found.id
    await withTransaction(pool, async (q) => {
      await recordVolumeCreated(q, nodeId, { id: found.id, linuxDevice: found.linux_device })
      await appendEvent(q, {
        kind: 'provision_volume_adopted',
        nodeId,
        data: { volume_id: found.id, size_gb: found.size, linux_device: found.linux_device, how: 'at decommission' },
      })
    })
  }
  const id = volumeId
  const volume = await provider(() => client.getVolume(id))
  if (!volume || volume.labels[NODE_ID_LABEL] !== nodeId) return recordGone(pool, nodeId, id, volume)
  const serverId = volume.server
  if (serverId !== null) {
    await provider(async () => {
      const action = await client.detachVolume(id)
      await client.waitForActions([action.id], options.pollMs === undefined ? {} : { pollMs: options.pollMs })
    })
  }
  await withTransaction(pool, async (q) => {
    await recordVolumeDetached(q, nodeId)
    await appendEvent(q, {
      kind: 'provider_volume_detached',
      nodeId,
      data: { volume_id: id, server_id: serverId, kept },
    })
  })
  return { id, state: 'detached', kept }
}

/** Deletes the node's detached volume; one already gone, or no longer labelled as the node's, counts as deleted. */
export async function deleteNodeVolume(pool: StatePool, client: Provider, row: ProvisionRow): Promise<VolumeRelease> {
  const volumeId = Number(row.providerVolumeId)
  try {
    const volume = await client.getVolume(volumeId)
    if (!volume || volume.labels[NODE_ID_LABEL] !== row.id) return await recordGone(pool, row.id, volumeId, volume)
    await client.deleteVolume(volumeId)
  } catch (error) {
    if (!isFleetkitError(error)) throw error
    throw new FleetkitError('PROVIDER_VOLUME_DELETE_FAILED', ...releaseFailure('delete', row, volumeId, error))
  }
  await withTransaction(pool, async (q) => {
    await recordVolumeDeleted(q, row.id)
    await appendEvent(q, { kind: 'provider_volume_deleted', nodeId: row.id, data: { volume_id: volumeId } })
  })
  return { id: volumeId, state: 'deleted', kept: false }
}

/**
 * The node's recorded volume is not at the provider as its own: gone, or its ID names a volume labelled for another
 * node, which is never touched. Recorded deleted, so nothing more is owed for it.
 */
async function recordGone(
  pool: StatePool,
  nodeId: string,
  id: number,
  other: { labels: Record<string, string> } | undefined,
): Promise<VolumeRelease> {
  const labelledFor = other === undefined ? undefined : (other.labels[NODE_ID_LABEL] ?? null)
  await withTransaction(pool, async (q) => {
    await recordVolumeDeleted(q, nodeId)
    await appendEvent(q, {
      kind: 'provider_volume_deleted',
      nodeId,
      data: {
        volume_id: id,
        how: labelledFor === undefined ? 'already gone' : 'left alone: labelled for another node',
        ...(labelledFor === undefined ? {} : { labelled_for: labelledFor }),
      },
    })
  })
  return { id, state: 'deleted', kept: false, alreadyGone: labelledFor === undefined ? {} : { labelledFor } }
}

/** The message and options of a failed detach or delete: the step stays recorded and the same command retries it. */
function releaseFailure(
  step: 'detach' | 'delete',
  row: ProvisionRow,
  volumeId: number | undefined,
  error: FleetkitError,
): [string, ConstructorParameters<typeof FleetkitError>[2]] {
  const providerCode = String(error.data?.providerCode ?? error.code)
  const again =
    step === 'delete'
      ? `fleetkit node decommission ${row.id} --delete-volume   (retries the delete)`
      : `fleetkit node decommission ${row.id}   (retries the detach)`
  return [
    `${row.id} is retired, but ${step === 'delete' ? 'deleting' : 'detaching'} its volume ${volumeId ?? '(by label)'} failed (${providerCode}); it is recorded and the same command retries it`,
    {
      cause: error,
      actions: [again, `fleetkit node show ${row.id}`],
      data: { node: row.id, volumeId: volumeId ?? null, providerCode },
    },
  ]
}
