// The provisioning columns of the nodes table (spec 06 "fleetkit node provision"): the durable step,
// the plan a --resume continues, the server it created, and the provider delete a decommission owes.
import type { Queryable } from '../database.js'
import { lockNodeSecretState } from '../nodes/enrollment-secrets.js'
import { NODE_COLUMNS, type NodeRow, toNode } from '../nodes/nodes.js'

export type ProvisionStep = 'pending' | 'server_requested' | 'awaiting_enrollment' | 'enrolled' | 'failed'

export interface ProvisionPlan {
  /** (region, type) pairs in the order they are tried. */
  candidates: { region: string; type: string }[]
  image: string
  placementGroup: string | null
  /** Index of the candidate the last create used. */
  attempt: number
  /**
   * The host key decision the run started with, taken under the node's lock: the key pinned then
   * (the state's, else fleet.yaml's) and whether --rekey replaces it; null when its seed carries no
   * host key (no ssh.user). A --resume continues it. Absent in a plan recorded before it was.
   */
  hostKey?: { hostKey: string | null; rekey: boolean } | null
  /** The host key this run pinned at its last create intent (null: none), which a resumed intent may replace. */
  pinnedHostKey?: string | null
  /** When its last create intent stored the run's secret (the database's clock), so the run knows its own. */
  secretIssuedAt?: string | null
}

export interface ProvisionRow extends NodeRow {
  plan: ProvisionPlan | null
  deletePending: boolean
  providerDeletedAt: Date | null
}

const COLUMNS = `${NODE_COLUMNS}, provision_plan, provider_delete_pending, provider_deleted_at`

function toProvisionRow(r: Record<string, unknown>): ProvisionRow {
  return {
    ...toNode(r),
    plan: (r.provision_plan as ProvisionPlan | null) ?? null,
    deletePending: r.provider_delete_pending as boolean,
    providerDeletedAt: r.provider_deleted_at as Date | null,
  }
}

export async function getProvisionRow(q: Queryable, nodeId: string, lock = false): Promise<ProvisionRow | undefined> {
  const { rows } = await q.query<Record<string, unknown>>(
    `SELECT ${COLUMNS} FROM nodes WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
    [nodeId],
  )
  return rows[0] ? toProvisionRow(rows[0]) : undefined
}

export interface LockedProvisionRow extends ProvisionRow {
  /** The stored secret is the one this run's last create intent stored (or there is none and it stored none). */
  secretIsTheRuns: boolean
}

/**
 * The node's row locked until the transaction ends, after the advisory lock `fleetkit seed` and
 * `node token` take first (lockNodeSecretState): a seed or token of the node waits for this
 * transaction, or this one for it, and each sees what the other committed. Undefined: no row.
 */
export async function lockProvisionRow(q: Queryable, nodeId: string): Promise<LockedProvisionRow | undefined> {
  await lockNodeSecretState(q, nodeId)
  const { rows } = await q.query<Record<string, unknown>>(
    `SELECT ${COLUMNS},
       enrollment_secret_issued_at IS NOT DISTINCT FROM (provision_plan->>'secretIssuedAt')::timestamptz AS secret_is_the_runs
     FROM nodes WHERE id = $1 FOR UPDATE`,
    [nodeId],
  )
  return rows[0] ? { ...toProvisionRow(rows[0]), secretIsTheRuns: rows[0].secret_is_the_runs === true } : undefined
}

/** The existing row holds a volume that still exists at the provider. */
const KEEPS_VOLUME = `nodes.provider_volume_id IS NOT NULL AND nodes.volume_state <> 'deleted'`

/**
 * Inserts the node (or takes over a parked or failed row of it) as provisioning, step `pending`. A row
 * taken over forgets its old server's addresses: the node's SSH address is the server this run records.
 */
export async function startProvisioning(
  q: Queryable,
  node: { id: string; pool: string; plan: ProvisionPlan; replaces?: string | null; volumeSizeGb?: number | null },
): Promise<ProvisionRow> {
  const first = node.plan.candidates[0]!
  // A failed row taken over keeps a volume it still has (found again and attached to the server
  // this run adopts or creates); otherwise the volume asked for now is planned.
  const { rows } = await q.query<Record<string, unknown>>(
    `INSERT INTO nodes (id, pool, region, server_type, image, status, provision_state, provider, provision_plan,
                        placement_group, replaces_node_id, volume_size_gb, volume_state)
     VALUES ($1, $2, $3, $4, $5, 'provisioning', 'pending', 'hetzner', $6, $7, $8, $9,
             CASE WHEN $9::int IS NULL THEN NULL ELSE 'planned' END)
     ON CONFLICT (id) DO UPDATE SET pool = EXCLUDED.pool, region = EXCLUDED.region, server_type = EXCLUDED.server_type,
       image = EXCLUDED.image, status = 'provisioning', schedulable = false, provision_state = 'pending',
       provision_error = NULL, provider = 'hetzner', provider_server_id = NULL, provision_plan = EXCLUDED.provision_plan,
       public_ipv4 = NULL, public_ipv6 = NULL, private_ipv4 = NULL,
       placement_group = EXCLUDED.placement_group, replaces_node_id = EXCLUDED.replaces_node_id,
       volume_size_gb = CASE WHEN ${KEEPS_VOLUME} THEN nodes.volume_size_gb ELSE EXCLUDED.volume_size_gb END,
       volume_state = CASE WHEN ${KEEPS_VOLUME} THEN 'created' ELSE EXCLUDED.volume_state END,
       provider_volume_id = CASE WHEN ${KEEPS_VOLUME} THEN nodes.provider_volume_id END,
       volume_linux_device = CASE WHEN ${KEEPS_VOLUME} THEN nodes.volume_linux_device END,
       updated_at = now()
     RETURNING ${COLUMNS}`,
    [
      node.id,
      node.pool,
      first.region,
      first.type,
      node.plan.image,
      JSON.stringify(node.plan),
      node.plan.placementGroup,
      node.replaces ?? null,
      node.volumeSizeGb ?? null,
    ],
  )
  return toProvisionRow(rows[0]!)
}

/**
 * Before a create, after the run's secret (and host key) were stored in the same transaction: the
 * candidate it uses, the capacity of its type (less the host reserve), and, in the plan, the secret's
 * issue time and the key it pinned: what a resumed intent may replace as its own.
 */
export async function recordCreateIntent(
  q: Queryable,
  nodeId: string,
  intent: {
    attempt: number
    region: string
    type: string
    capacity: { cpu: number; memoryMib: number; diskGib: number }
    pinnedHostKey: string | null
  },
): Promise<void> {
  // jsonb_set of a NULL value is NULL (the whole plan): 'null' keeps the key and the plan.
  await q.query(
    `UPDATE nodes SET region = $2, server_type = $3, capacity_cpu = $4, capacity_memory_mib = $5, capacity_disk_gib = $6,
       provision_plan = jsonb_set(jsonb_set(jsonb_set(provision_plan, '{attempt}', to_jsonb($7::int)),
         '{secretIssuedAt}', COALESCE(to_jsonb(enrollment_secret_issued_at), 'null'::jsonb)),
         '{pinnedHostKey}', COALESCE(to_jsonb($8::text), 'null'::jsonb)),
       updated_at = now()
     WHERE id = $1`,
    [
      nodeId,
      intent.region,
      intent.type,
      intent.capacity.cpu,
      intent.capacity.memoryMib,
      intent.capacity.diskGib,
      intent.attempt,
      intent.pinnedHostKey,
    ],
  )
}

export interface ServerRecord {
  serverId: number
  region?: string
  type?: string
  image?: string | null
  publicIpv4?: string | null
  publicIpv6?: string | null
  privateIpv4?: string | null
}

/**
 * Records the server and moves to `step` (server_requested once created, awaiting_enrollment once
 * running); an agent that enrolled meanwhile keeps `enrolled`.
 */
export async function recordServer(
  q: Queryable,
  nodeId: string,
  step: ProvisionStep,
  server: ServerRecord,
): Promise<void> {
  await q.query(
    `UPDATE nodes SET provision_state = CASE WHEN provision_state = 'enrolled' THEN provision_state ELSE $2 END,
       provider_server_id = $3, region = COALESCE($4, region),
       server_type = COALESCE($5, server_type), image = COALESCE($6, image), public_ipv4 = COALESCE($7::inet, public_ipv4),
       public_ipv6 = COALESCE($8::inet, public_ipv6), private_ipv4 = COALESCE($9::inet, private_ipv4), updated_at = now()
     WHERE id = $1`,
    [
      nodeId,
      step,
      String(server.serverId),
      server.region ?? null,
      server.type ?? null,
      server.image ?? null,
      server.publicIpv4 ?? null,
      server.publicIpv6 ?? null,
      server.privateIpv4 ?? null,
    ],
  )
}

/** The enrollment secret expired unused: the node is `failed`, and so is its provisioning. */
export async function failProvisioning(q: Queryable, nodeId: string, error: string): Promise<void> {
  await q.query(
    `UPDATE nodes SET status = 'failed', schedulable = false, provision_state = 'failed', provision_error = $2,
       updated_at = now()
     WHERE id = $1 AND provision_state = 'awaiting_enrollment' AND enrollment_secret_used_at IS NULL`,
    [nodeId, error],
  )
}

/** Marks the provider server as owed a delete (in the retiring transaction). */
export async function markDeletePending(q: Queryable, nodeId: string): Promise<void> {
  await q.query(
    `UPDATE nodes SET provider_delete_pending = true, updated_at = now() WHERE id = $1 AND provider_deleted_at IS NULL`,
    [nodeId],
  )
}

export async function markServerDeleted(q: Queryable, nodeId: string): Promise<void> {
  await q.query(
    `UPDATE nodes SET provider_delete_pending = false, provider_deleted_at = now(), updated_at = now() WHERE id = $1`,
    [nodeId],
  )
}
