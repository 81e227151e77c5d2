// Each node's fingerprint after its last full converge (migration 0009): what the next sync's probe
// reads and compares. Written only after a full run converged the node; dropped when one did not.
import type { Queryable } from '../database.js'

/** Something a role manages on a host, as the fleetkit_events callback reports it: a path, unit, package ... */
export interface ManagedResource {
  kind: string
  name: string
}

export interface NodeFingerprintRow {
  nodeId: string
  inputHash: string
  digest: string
  items: Record<string, string>
  resources: ManagedResource[]
  runId: number
  recordedAt: Date
}

export async function getNodeFingerprints(q: Queryable, nodeIds: readonly string[]): Promise<NodeFingerprintRow[]> {
  const { rows } = await q.query<{
    node_id: string
    input_hash: string
    digest: string
    items: Record<string, string>
    resources: ManagedResource[]
    run_id: string
    recorded_at: Date
  }>(
    'SELECT node_id, input_hash, digest, items, resources, run_id, recorded_at FROM node_fingerprints WHERE node_id = ANY($1::text[]) ORDER BY node_id',
    [nodeIds],
  )
  return rows.map((r) => ({
    nodeId: r.node_id,
    inputHash: r.input_hash,
    digest: r.digest,
    items: r.items,
    resources: r.resources,
    runId: Number(r.run_id),
    recordedAt: r.recorded_at,
  }))
}

/** `recordedAt` is the controller's clock, the one the next sync judges the fingerprint's age on. */
export async function recordNodeFingerprint(q: Queryable, row: NodeFingerprintRow): Promise<void> {
  await q.query(
    `INSERT INTO node_fingerprints (node_id, input_hash, digest, items, resources, run_id, recorded_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (node_id) DO UPDATE SET input_hash = EXCLUDED.input_hash, digest = EXCLUDED.digest, items = EXCLUDED.items,
       resources = EXCLUDED.resources, run_id = EXCLUDED.run_id, recorded_at = EXCLUDED.recorded_at`,
    [
      row.nodeId,
      row.inputHash,
      row.digest,
      JSON.stringify(row.items),
      JSON.stringify(row.resources),
      row.runId,
      row.recordedAt,
    ],
  )
}

/** A node whose last run did not converge has no fingerprint: its next sync runs in full. */
export async function forgetNodeFingerprints(q: Queryable, nodeIds: readonly string[]): Promise<void> {
  if (nodeIds.length > 0) await q.query('DELETE FROM node_fingerprints WHERE node_id = ANY($1::text[])', [nodeIds])
}
