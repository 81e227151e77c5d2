// The nodes table's rows: declared nodes, their status and SSH host key. Enrollment secrets
// are in enrollment-secrets.ts, heartbeats and host facts in heartbeats.ts.
import type { Queryable } from '../database.js'

export const NODE_STATUSES = [
  'provisioning',
  'active',
  'unhealthy',
  'draining',
  'retired',
  'lost',
  'parked',
  'failed',
] as const
export type NodeStatus = (typeof NODE_STATUSES)[number]

export type ProvisionState = 'pending' | 'server_requested' | 'awaiting_enrollment' | 'enrolled' | 'failed'

/** A provisioned data volume's step (migration 0012, src/store/provider/provider-volumes.ts). */
export type VolumeState = 'planned' | 'requested' | 'created' | 'attached' | 'detached' | 'deleted'

export interface NodeRow {
  id: string
  pool: string
  region: string | null
  serverType: string | null
  image: string | null
  status: NodeStatus
  schedulable: boolean
  provisionState: ProvisionState | null
  provisionError: string | null
  provider: string | null
  providerServerId: string | null
  /** The Hetzner volume `node provision --volume` asked for; null without one. */
  volumeSizeGb: number | null
  volumeState: VolumeState | null
  providerVolumeId: string | null
  /** The volume's device on the host (/dev/disk/by-id/scsi-0HC_Volume_ID): the data_volume role's device. */
  volumeLinuxDevice: string | null
  publicIpv4: string | null
  publicIpv6: string | null
  privateIpv4: string | null
  sshHost: string | null
  replacesNodeId: string | null
  capacityCpu: number | null
  capacityMemoryMib: number | null
  capacityDiskGib: number | null
  /** Whether an enrollment secret hash is stored; the hash itself is never read back. */
  hasEnrollmentSecret: boolean
  enrollmentSecretExpiresAt: Date | null
  enrollmentSecretUsedAt: Date | null
  hostKeyPublic: string | null
  lastSeenAt: Date | null
  hostCpuCount: number | null
  hostMemoryMb: number | null
  hostDataDiskFreeGb: number | null
  hostKernel: string | null
  hostDockerVersion: string | null
  hostAgentVersion: string | null
  hostBridgeNetfilter: boolean | null
  hostClockSkewMs: number | null
  hostFactsAt: Date | null
  lostAt: Date | null
  retiredAt: Date | null
  createdAt: Date
  updatedAt: Date
}

/** Every column of a NodeRow, for the modules of this table family. */
export const NODE_COLUMNS = `id, pool, region, server_type, image, status, schedulable, provision_state, provision_error,
  provider, provider_server_id, volume_size_gb, volume_state, provider_volume_id, volume_linux_device,
  host(public_ipv4) AS public_ipv4, host(public_ipv6) AS public_ipv6,
  host(private_ipv4) AS private_ipv4, ssh_host, replaces_node_id, capacity_cpu, capacity_memory_mib, capacity_disk_gib,
  enrollment_secret_sha256 IS NOT NULL AS has_enrollment_secret, enrollment_secret_expires_at, enrollment_secret_used_at,
  host_key_public, last_seen_at, host_cpu_count, host_memory_mb, host_data_disk_free_gb, host_kernel,
  host_docker_version, host_agent_version, host_bridge_netfilter, host_clock_skew_ms, host_facts_at,
  lost_at, retired_at, created_at, updated_at`

type Raw = Record<string, unknown>

export function toNode(r: Raw): NodeRow {
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v))
  return {
    id: r.id as string,
    pool: r.pool as string,
    region: r.region as string | null,
    serverType: r.server_type as string | null,
    image: r.image as string | null,
    status: r.status as NodeStatus,
    schedulable: r.schedulable as boolean,
    provisionState: r.provision_state as ProvisionState | null,
    provisionError: r.provision_error as string | null,
    provider: r.provider as string | null,
    providerServerId: r.provider_server_id as string | null,
    volumeSizeGb: num(r.volume_size_gb),
    volumeState: r.volume_state as VolumeState | null,
    providerVolumeId: r.provider_volume_id as string | null,
    volumeLinuxDevice: r.volume_linux_device as string | null,
    publicIpv4: r.public_ipv4 as string | null,
    publicIpv6: r.public_ipv6 as string | null,
    privateIpv4: r.private_ipv4 as string | null,
    sshHost: r.ssh_host as string | null,
    replacesNodeId: r.replaces_node_id as string | null,
    capacityCpu: num(r.capacity_cpu),
    capacityMemoryMib: num(r.capacity_memory_mib),
    capacityDiskGib: num(r.capacity_disk_gib),
    hasEnrollmentSecret: r.has_enrollment_secret as boolean,
    enrollmentSecretExpiresAt: r.enrollment_secret_expires_at as Date | null,
    enrollmentSecretUsedAt: r.enrollment_secret_used_at as Date | null,
    hostKeyPublic: r.host_key_public as string | null,
    lastSeenAt: r.last_seen_at as Date | null,
    hostCpuCount: num(r.host_cpu_count),
    hostMemoryMb: num(r.host_memory_mb),
    hostDataDiskFreeGb: num(r.host_data_disk_free_gb),
    hostKernel: r.host_kernel as string | null,
    hostDockerVersion: r.host_docker_version as string | null,
    hostAgentVersion: r.host_agent_version as string | null,
    hostBridgeNetfilter: r.host_bridge_netfilter as boolean | null,
    hostClockSkewMs: num(r.host_clock_skew_ms),
    hostFactsAt: r.host_facts_at as Date | null,
    lostAt: r.lost_at as Date | null,
    retiredAt: r.retired_at as Date | null,
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
  }
}

export interface DeclaredNode {
  id: string
  pool: string
  region?: string | null
  serverType?: string | null
  /** Defaults to `parked` for a new row; an existing row keeps its status unless one is given. */
  status?: NodeStatus
}

/** Insert a declared node, or update pool, region and type of an existing one. */
export async function upsertDeclaredNode(q: Queryable, node: DeclaredNode): Promise<NodeRow> {
  const result = await q.query(
    `INSERT INTO nodes (id, pool, region, server_type, status)
     VALUES ($1, $2, $3, $4, COALESCE($5, 'parked'))
     ON CONFLICT (id) DO UPDATE SET
       pool = EXCLUDED.pool,
       region = COALESCE($3, nodes.region),
       server_type = COALESCE($4, nodes.server_type),
       status = COALESCE($5, nodes.status),
       schedulable = nodes.schedulable AND COALESCE($5, nodes.status) IN ('active', 'unhealthy'),
       updated_at = now()
     RETURNING ${NODE_COLUMNS}`,
    [node.id, node.pool, node.region ?? null, node.serverType ?? null, node.status ?? null],
  )
  return toNode(result.rows[0] as Raw)
}

/** Record the public half of the SSH host key the worker seed generated. */
export async function setNodeHostKey(q: Queryable, nodeId: string, publicKey: string): Promise<boolean> {
  const key = publicKey.trim()
  if (key.length === 0 || key.length > 4096) throw new RangeError('an SSH public host key is 1 to 4096 characters')
  const result = await q.query('UPDATE nodes SET host_key_public = $2, updated_at = now() WHERE id = $1', [nodeId, key])
  return result.rowCount === 1
}

export async function getNode(q: Queryable, id: string): Promise<NodeRow | undefined> {
  const result = await q.query(`SELECT ${NODE_COLUMNS} FROM nodes WHERE id = $1`, [id])
  return result.rows[0] ? toNode(result.rows[0] as Raw) : undefined
}

/** Every node id in the state, for "did you mean" when a command is given one that is not. */
export async function listNodeIds(q: Queryable): Promise<string[]> {
  const result = await q.query<{ id: string }>('SELECT id FROM nodes ORDER BY id')
  return result.rows.map((r) => r.id)
}

export interface NodeFilter {
  status?: NodeStatus | NodeStatus[]
  pool?: string
}

export async function listNodes(q: Queryable, filter: NodeFilter = {}): Promise<NodeRow[]> {
  const statuses = filter.status === undefined ? null : Array.isArray(filter.status) ? filter.status : [filter.status]
  const result = await q.query(
    `SELECT ${NODE_COLUMNS} FROM nodes
     WHERE ($1::text[] IS NULL OR status = ANY($1)) AND ($2::text IS NULL OR pool = $2)
     ORDER BY pool, id`,
    [statuses, filter.pool ?? null],
  )
  return result.rows.map((r) => toNode(r as Raw))
}

/**
 * Set a node's status. A node leaving `active`/`unhealthy` also stops being schedulable
 * (only `admit` makes a node schedulable). Returns the updated node, or undefined.
 */
export async function setNodeStatus(q: Queryable, id: string, status: NodeStatus): Promise<NodeRow | undefined> {
  if (!(NODE_STATUSES as readonly string[]).includes(status)) throw new RangeError(`unknown node status ${status}`)
  const result = await q.query(
    `UPDATE nodes SET status = $2, schedulable = schedulable AND $2 IN ('active', 'unhealthy'), updated_at = now()
     WHERE id = $1
     RETURNING ${NODE_COLUMNS}`,
    [id, status],
  )
  return result.rows[0] ? toNode(result.rows[0] as Raw) : undefined
}

/** Node counts by status, every status present (0 when none): for `db status` and metrics. */
export async function countNodesByStatus(q: Queryable): Promise<Record<NodeStatus, number>> {
  const result = await q.query<{ status: NodeStatus; count: string }>(
    'SELECT status, count(*) AS count FROM nodes GROUP BY status',
  )
  const counts = Object.fromEntries(NODE_STATUSES.map((s) => [s, 0])) as Record<NodeStatus, number>
  for (const row of result.rows) counts[row.status] = Number(row.count)
  return counts
}
