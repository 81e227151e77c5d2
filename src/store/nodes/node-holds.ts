// Hands-off holds (migration 0017): a held node is one `fleetkit reconcile` leaves alone. One row per
// held node with who held it, why and when; a release deletes the row (its event keeps the history).
import type { Queryable } from '../database.js'

export interface NodeHold {
  nodeId: string
  reason: string
  heldBy: string
  heldAt: Date
}

function toHold(r: Record<string, unknown>): NodeHold {
  return {
    nodeId: r.node_id as string,
    reason: r.reason as string,
    heldBy: r.held_by as string,
    heldAt: r.held_at as Date,
  }
}

export async function getNodeHold(q: Queryable, nodeId: string): Promise<NodeHold | undefined> {
  const { rows } = await q.query('SELECT node_id, reason, held_by, held_at FROM node_holds WHERE node_id = $1', [
    nodeId,
  ])
  return rows[0] ? toHold(rows[0] as Record<string, unknown>) : undefined
}

/** Every hold, by node id. */
export async function listNodeHolds(q: Queryable): Promise<NodeHold[]> {
  const { rows } = await q.query('SELECT node_id, reason, held_by, held_at FROM node_holds ORDER BY node_id')
  return rows.map((r) => toHold(r as Record<string, unknown>))
}

/** Records the hold; the row as written. Call with the node locked (a second hold is the caller's to judge). */
export async function insertNodeHold(
  q: Queryable,
  hold: { nodeId: string; reason: string; heldBy: string },
): Promise<NodeHold> {
  const { rows } = await q.query(
    'INSERT INTO node_holds (node_id, reason, held_by) VALUES ($1, $2, $3) RETURNING node_id, reason, held_by, held_at',
    [hold.nodeId, hold.reason, hold.heldBy],
  )
  return toHold(rows[0] as Record<string, unknown>)
}

/** Removes the hold; the row it removed, or undefined when the node was not held. */
export async function deleteNodeHold(q: Queryable, nodeId: string): Promise<NodeHold | undefined> {
  const { rows } = await q.query(
    'DELETE FROM node_holds WHERE node_id = $1 RETURNING node_id, reason, held_by, held_at',
    [nodeId],
  )
  return rows[0] ? toHold(rows[0] as Record<string, unknown>) : undefined
}
