// The nodes table: declared nodes, enrollment secrets (hashes only), status, SSH host key
// and the host facts agents report, written for a whole heartbeat batch in one statement.
import type { Queryable } from './database.js'

export const NODE_STATUSES = ['provisioning', 'active', 'unhealthy', 'draining', 'retired', 'lost', 'parked', 'failed'] as const
export type NodeStatus = (typeof NODE_STATUSES)[number]

export const PROVISION_STATES = ['pending', 'server_requested', 'awaiting_enrollment', 'enrolled', 'failed'] as const
export type ProvisionState = (typeof PROVISION_STATES)[number]

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

const NODE_COLUMNS = `id, pool, region, server_type, image, status, schedulable, provision_state, provision_error,
  provider, provider_server_id, host(public_ipv4) AS public_ipv4, host(public_ipv6) AS public_ipv6,
  host(private_ipv4) AS private_ipv4, ssh_host, replaces_node_id, capacity_cpu, capacity_memory_mib, capacity_disk_gib,
  enrollment_secret_sha256 IS NOT NULL AS has_enrollment_secret, enrollment_secret_expires_at, enrollment_secret_used_at,
  host_key_public, last_seen_at, host_cpu_count, host_memory_mb, host_data_disk_free_gb, host_kernel,
  host_docker_version, host_agent_version, host_bridge_netfilter, host_clock_skew_ms, host_facts_at,
  lost_at, retired_at, created_at, updated_at`

type Raw = Record<string, unknown>

function toNode(r: Raw): NodeRow {
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

/**
 * Store the SHA-256 of a new enrollment secret (replacing any previous one), clear its
 * used mark and set the node `provisioning`. Returns the node, or undefined if it does not exist.
 */
export async function issueEnrollmentSecret(q: Queryable, nodeId: string, secretSha256: Buffer, expiresAt: Date): Promise<NodeRow | undefined> {
  assertSha256(secretSha256)
  const result = await q.query(
    `UPDATE nodes SET enrollment_secret_sha256 = $2, enrollment_secret_expires_at = $3, enrollment_secret_used_at = NULL,
       status = 'provisioning', schedulable = false, updated_at = now()
     WHERE id = $1
     RETURNING ${NODE_COLUMNS}`,
    [nodeId, secretSha256, expiresAt],
  )
  return result.rows[0] ? toNode(result.rows[0] as Raw) : undefined
}

/**
 * Consume an enrollment secret in ONE conditional UPDATE: the hash matches, it is unused and
 * unexpired at `now`, and the node is `provisioning` (or enrolled with a secret reissued on
 * purpose, src/store/node-secrets.ts). The node becomes `active` (a draining node stays
 * draining) with last_seen_at = now (and provision_state `enrolled` if it was being provisioned).
 * True iff this call consumed it: of concurrent attempts with one secret, exactly one wins.
 */
export async function consumeEnrollmentSecret(q: Queryable, nodeId: string, secretSha256: Buffer, now: Date): Promise<boolean> {
  if (secretSha256.length !== 32) return false
  const result = await q.query(
    `UPDATE nodes SET status = CASE WHEN status = 'draining' THEN status ELSE 'active' END,
       last_seen_at = $3, enrollment_secret_used_at = $3, enrollment_secret_reissued = false,
       provision_state = CASE WHEN provision_state IS NULL THEN NULL ELSE 'enrolled' END,
       lost_at = NULL, updated_at = now()
     WHERE id = $1
       AND (status = 'provisioning' OR (enrollment_secret_reissued AND status IN ('active', 'unhealthy', 'draining', 'lost')))
       AND enrollment_secret_sha256 = $2
       AND enrollment_secret_used_at IS NULL
       AND enrollment_secret_expires_at > $3`,
    [nodeId, secretSha256, now],
  )
  return result.rowCount === 1
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
  const result = await q.query<{ status: NodeStatus; count: string }>('SELECT status, count(*) AS count FROM nodes GROUP BY status')
  const counts = Object.fromEntries(NODE_STATUSES.map((s) => [s, 0])) as Record<NodeStatus, number>
  for (const row of result.rows) counts[row.status] = Number(row.count)
  return counts
}

/** Host facts as the agent sends them (spec 05); anything may be missing or malformed. */
export interface WireHostFacts {
  cpu_count?: unknown
  memory_mb?: unknown
  data_disk_free_gb?: unknown
  kernel?: unknown
  docker_version?: unknown
  agent_version?: unknown
  bridge_netfilter?: unknown
  clock_skew_ms?: unknown
}

export interface BoundedHostFacts {
  cpuCount: number | null
  memoryMb: number | null
  dataDiskFreeGb: number | null
  kernel: string | null
  dockerVersion: string | null
  agentVersion: string | null
  bridgeNetfilter: boolean | null
  clockSkewMs: number | null
}

export const HOST_FACT_STRING_MAX = 128
const INT4_MAX = 2_147_483_647

/**
 * Facts reduced to what the columns hold: integers in range (else null), finite numbers,
 * strings without control characters cut to HOST_FACT_STRING_MAX, booleans only if boolean.
 */
export function boundHostFacts(facts: WireHostFacts | null | undefined): BoundedHostFacts {
  const f = facts ?? {}
  return {
    cpuCount: boundInt(f.cpu_count, 0, 1_000_000),
    memoryMb: boundInt(f.memory_mb, 0, INT4_MAX),
    dataDiskFreeGb: boundNumber(f.data_disk_free_gb, 0, 1e12),
    kernel: boundString(f.kernel),
    dockerVersion: boundString(f.docker_version),
    agentVersion: boundString(f.agent_version),
    bridgeNetfilter: typeof f.bridge_netfilter === 'boolean' ? f.bridge_netfilter : null,
    clockSkewMs: boundInt(f.clock_skew_ms, -INT4_MAX, INT4_MAX, true),
  }
}

function boundNumber(value: unknown, min: number, max: number): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max ? value : null
}

function boundInt(value: unknown, min: number, max: number, clamp = false): number | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) return null
  const n = Math.round(value)
  if (clamp) return Math.min(max, Math.max(min, n))
  return n >= min && n <= max ? n : null
}

function boundString(value: unknown): string | null {
  if (typeof value !== 'string') return null
  // eslint-disable-next-line no-control-regex
  const clean = value.replace(/[\u0000-\u001f\u007f]/g, ' ').trim()
  if (clean === '') return null
  return Array.from(clean).slice(0, HOST_FACT_STRING_MAX).join('')
}

export interface Heartbeat {
  nodeId: string
  seenAt: Date
  /** Omitted or null: only last_seen_at moves; the stored facts stay. */
  facts?: WireHostFacts | null
}

/**
 * Write a batch of heartbeats in ONE statement (unnest over parallel arrays). last_seen_at
 * never moves backwards and facts older than the stored ones are ignored, so batches from
 * several gateways may land in any order. For one node in one batch, the latest heartbeat wins.
 * Returns the number of nodes updated (unknown nodes are ignored).
 */
export async function recordHeartbeats(q: Queryable, batch: readonly Heartbeat[]): Promise<number> {
  const latest = new Map<string, Heartbeat>()
  for (const beat of batch) {
    const seen = latest.get(beat.nodeId)
    if (!seen || beat.seenAt.getTime() >= seen.seenAt.getTime()) {
      // A later beat without facts keeps the facts of an earlier one in the same batch.
      latest.set(beat.nodeId, beat.facts == null && seen?.facts != null ? { ...beat, facts: seen.facts } : beat)
    }
  }
  if (latest.size === 0) return 0
  const beats = [...latest.values()]
  const bounded = beats.map((b) => (b.facts == null ? undefined : boundHostFacts(b.facts)))
  const col = <T>(pick: (f: BoundedHostFacts) => T) => bounded.map((f) => (f ? pick(f) : null))
  const result = await q.query(
    `WITH locked AS (
       -- Row locks taken in id order: two gateways' overlapping batches cannot deadlock.
       SELECT id, host_facts_at FROM nodes WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE
     )
     UPDATE nodes AS n SET
       last_seen_at = GREATEST(n.last_seen_at, b.seen_at),
       host_cpu_count = CASE WHEN b.fresh THEN b.cpu_count ELSE n.host_cpu_count END,
       host_memory_mb = CASE WHEN b.fresh THEN b.memory_mb ELSE n.host_memory_mb END,
       host_data_disk_free_gb = CASE WHEN b.fresh THEN b.disk_free_gb ELSE n.host_data_disk_free_gb END,
       host_kernel = CASE WHEN b.fresh THEN b.kernel ELSE n.host_kernel END,
       host_docker_version = CASE WHEN b.fresh THEN b.docker_version ELSE n.host_docker_version END,
       host_agent_version = CASE WHEN b.fresh THEN b.agent_version ELSE n.host_agent_version END,
       host_bridge_netfilter = CASE WHEN b.fresh THEN b.bridge_netfilter ELSE n.host_bridge_netfilter END,
       host_clock_skew_ms = CASE WHEN b.fresh THEN b.clock_skew_ms ELSE n.host_clock_skew_ms END,
       host_facts_at = CASE WHEN b.fresh THEN b.seen_at ELSE n.host_facts_at END
     FROM (
       SELECT u.*, u.has_facts AND u.seen_at >= COALESCE(m.host_facts_at, '-infinity') AS fresh
       FROM unnest($1::text[], $2::timestamptz[], $3::boolean[], $4::integer[], $5::integer[], $6::double precision[],
                   $7::text[], $8::text[], $9::text[], $10::boolean[], $11::integer[])
            AS u(node_id, seen_at, has_facts, cpu_count, memory_mb, disk_free_gb, kernel, docker_version, agent_version, bridge_netfilter, clock_skew_ms)
       JOIN locked AS m ON m.id = u.node_id
     ) AS b
     WHERE n.id = b.node_id`,
    [
      beats.map((b) => b.nodeId),
      beats.map((b) => b.seenAt),
      bounded.map((f) => f !== undefined),
      col((f) => f.cpuCount),
      col((f) => f.memoryMb),
      col((f) => f.dataDiskFreeGb),
      col((f) => f.kernel),
      col((f) => f.dockerVersion),
      col((f) => f.agentVersion),
      col((f) => f.bridgeNetfilter),
      col((f) => f.clockSkewMs),
    ],
  )
  return result.rowCount ?? 0
}

function assertSha256(hash: Buffer): void {
  if (!Buffer.isBuffer(hash) || hash.length !== 32) throw new RangeError('an enrollment secret hash is a 32-byte SHA-256 digest')
}
