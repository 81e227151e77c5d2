// The volume columns of the nodes table (migration 0012): the Hetzner volume `node provision
// --volume SIZE` creates and attaches, and `node decommission` detaches (and deletes with
// --delete-volume). Each step is written before the next request, so a rerun continues it.
import type { Queryable } from '../database.js'

/** Before the create request: a lost answer is then looked up by the node's label, never sent twice. */
export async function recordVolumeIntent(q: Queryable, nodeId: string): Promise<void> {
  await q.query(
    `UPDATE nodes SET volume_state = 'requested', updated_at = now()
      WHERE id = $1 AND volume_state IN ('planned', 'requested')`,
    [nodeId],
  )
}

/** The volume exists (created by this run or found by its label): its id and device. */
export async function recordVolumeCreated(
  q: Queryable,
  nodeId: string,
  volume: { id: number; linuxDevice: string },
): Promise<void> {
  await q.query(
    `UPDATE nodes SET volume_state = 'created', provider_volume_id = $2, volume_linux_device = $3, updated_at = now()
      WHERE id = $1`,
    [nodeId, String(volume.id), volume.linuxDevice],
  )
}

export async function recordVolumeAttached(q: Queryable, nodeId: string): Promise<void> {
  await q.query(`UPDATE nodes SET volume_state = 'attached', updated_at = now() WHERE id = $1`, [nodeId])
}

export async function recordVolumeDetached(q: Queryable, nodeId: string): Promise<void> {
  await q.query(`UPDATE nodes SET volume_state = 'detached', updated_at = now() WHERE id = $1`, [nodeId])
}

export async function recordVolumeDeleted(q: Queryable, nodeId: string): Promise<void> {
  await q.query(`UPDATE nodes SET volume_state = 'deleted', updated_at = now() WHERE id = $1`, [nodeId])
}

/** A requested volume the provider never made (no volume carries the node's label): nothing is owed. */
export async function forgetVolumeRequest(q: Queryable, nodeId: string): Promise<void> {
  await q.query(
    `UPDATE nodes SET volume_state = 'planned', updated_at = now() WHERE id = $1 AND volume_state = 'requested'`,
    [nodeId],
  )
}
