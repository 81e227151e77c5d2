// Capacity reservations on nodes: reserve (node row locked FOR UPDATE, so two reservations
// cannot both fit the last capacity; a stranded allocation's capacity still counts), release, list. The refusal rules live in src/lifecycle/.
import type { Pool } from 'pg'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { type Queryable, withTransaction } from '../database.js'
import { appendEvent } from '../events.js'

export interface AllocationRow {
  id: string
  nodeId: string
  owner: string
  cpu: number
  memoryMib: number
  diskGib: number
  status: AllocationStatus
  createdAt: Date
  releasedAt: Date | null
  releaseReason: string | null
  /** When its node was lost (a stateful pool's); kept after a release, cleared when it resumed. */
  strandedAt: Date | null
}

export type AllocationStatus = 'active' | 'released' | 'stranded'

interface Capacity3 {
  cpu: number
  memoryMib: number
  diskGib: number
}

const COLUMNS =
  'id::text AS id, node_id, owner, cpu, memory_mib, disk_gib, status, created_at, released_at, release_reason, stranded_at'
type Raw = Record<string, unknown>

function toAllocation(r: Raw): AllocationRow {
  return {
    id: r.id as string,
    nodeId: r.node_id as string,
    owner: r.owner as string,
    cpu: Number(r.cpu),
    memoryMib: Number(r.memory_mib),
    diskGib: Number(r.disk_gib),
    status: r.status as AllocationRow['status'],
    createdAt: r.created_at as Date,
    releasedAt: (r.released_at as Date | null) ?? null,
    releaseReason: (r.release_reason as string | null) ?? null,
    strandedAt: (r.stranded_at as Date | null) ?? null,
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

function isAllocationId(value: string): boolean {
  return UUID.test(value)
}

/** The node's row locked for the rest of the transaction, with what its active and stranded allocations hold. */
async function lockNodeCapacity(
  q: Queryable,
  nodeId: string,
): Promise<
  | {
      status: string
      schedulable: boolean
      capacity: Capacity3 | null
      reserved: Capacity3
      silentSeconds: number | null
    }
  | undefined
> {
  const node = await q.query<Raw>(
    `SELECT status, schedulable, capacity_cpu, capacity_memory_mib, capacity_disk_gib, extract(epoch FROM now() - last_seen_at) AS silent
       FROM nodes WHERE id = $1 FOR UPDATE`,
    [nodeId],
  )
  const n = node.rows[0]
  if (!n) return undefined
  const held = await q.query<Raw>(
    `SELECT COALESCE(sum(cpu), 0) AS cpu, COALESCE(sum(memory_mib), 0) AS memory, COALESCE(sum(disk_gib), 0) AS disk
       FROM allocations WHERE node_id = $1 AND status IN ('active', 'stranded')`,
    [nodeId],
  )
  const h = held.rows[0]!
  const capacity =
    n.capacity_cpu === null || n.capacity_memory_mib === null || n.capacity_disk_gib === null
      ? null
      : { cpu: Number(n.capacity_cpu), memoryMib: Number(n.capacity_memory_mib), diskGib: Number(n.capacity_disk_gib) }
  return {
    status: n.status as string,
    schedulable: n.schedulable as boolean,
    capacity,
    reserved: { cpu: Number(h.cpu), memoryMib: Number(h.memory), diskGib: Number(h.disk) },
    silentSeconds: n.silent === null ? null : Number(n.silent),
  }
}

async function insertAllocation(
  q: Queryable,
  a: { nodeId: string; owner: string } & Capacity3,
): Promise<AllocationRow> {
  const { rows } = await q.query<Raw>(
    `INSERT INTO allocations (node_id, owner, cpu, memory_mib, disk_gib) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
    [a.nodeId, a.owner, a.cpu, a.memoryMib, a.diskGib],
  )
  return toAllocation(rows[0]!)
}

/** Release one active allocation; undefined when unknown or already released. */
async function releaseAllocation(q: Queryable, id: string, reason: string): Promise<AllocationRow | undefined> {
  if (!isAllocationId(id)) return undefined
  const { rows } = await q.query<Raw>(
    `UPDATE allocations SET status = 'released', released_at = now(), release_reason = $2 WHERE id = $1 AND status = 'active' RETURNING ${COLUMNS}`,
    [id, reason],
  )
  return rows[0] ? toAllocation(rows[0]) : undefined
}

export async function listAllocations(
  q: Queryable,
  filter: { nodeId?: string; owner?: string; status?: AllocationStatus } = {},
): Promise<AllocationRow[]> {
  const { rows } = await q.query<Raw>(
    `SELECT ${COLUMNS} FROM allocations
      WHERE ($1::text IS NULL OR node_id = $1) AND ($2::text IS NULL OR owner = $2) AND ($3::text IS NULL OR status = $3)
      ORDER BY created_at, id LIMIT 10000`,
    [filter.nodeId ?? null, filter.owner ?? null, filter.status ?? null],
  )
  return rows.map(toAllocation)
}

export interface ReserveRequest extends Capacity3 {
  nodeId: string
  owner: string
  /** Who asked, for the event (an operator name, `loopback`, a login). */
  actor: string
}

/**
 * Reserve capacity in one transaction holding the node row FOR UPDATE: refused unless the node is
 * active and schedulable (NODE_NOT_SCHEDULABLE) and the reservation fits what the node's capacity
 * leaves (ALLOCATION_OVER_CAPACITY). The CLI and the gateway's operator API both call this.
 */
export async function reserveAllocation(pool: Pool, request: ReserveRequest): Promise<AllocationRow> {
  return withTransaction(pool, async (client) => {
    const node = await lockNodeCapacity(client, request.nodeId)
    const shown = JSON.stringify(request.nodeId.slice(0, 64))
    if (!node)
      throw new FleetkitError('NODE_UNKNOWN', `no node ${shown} in the state database`, {
        actions: ['fleetkit node list'],
      })
    if (node.status !== 'active' || !node.schedulable) {
      throw new FleetkitError(
        'NODE_NOT_SCHEDULABLE',
        `${request.nodeId} is ${node.status}${node.schedulable ? '' : ', not schedulable'}: nothing can be reserved on it`,
        {
          actions: [`fleetkit node show ${request.nodeId}`, `fleetkit node admit ${request.nodeId}`],
          data: { nodeId: request.nodeId, status: node.status, schedulable: node.schedulable },
        },
      )
    }
    const capacity = node.capacity ?? { cpu: 0, memoryMib: 0, diskGib: 0 }
    const after = {
      cpu: round(node.reserved.cpu + request.cpu),
      memoryMib: node.reserved.memoryMib + request.memoryMib,
      diskGib: node.reserved.diskGib + request.diskGib,
    }
    const over = (['cpu', 'memoryMib', 'diskGib'] as const).filter((d) => after[d] > capacity[d])
    if (over.length > 0) {
      throw new FleetkitError(
        'ALLOCATION_OVER_CAPACITY',
        `${request.nodeId} cannot take it: ${over.map((d) => `${d} ${after[d]} > ${capacity[d]}`).join(', ')}`,
        {
          actions: [`fleetkit alloc list --node ${request.nodeId}`, 'fleetkit node list --schedulable'],
          data: {
            nodeId: request.nodeId,
            over,
            capacity,
            reserved: node.reserved,
            requested: { cpu: request.cpu, memoryMib: request.memoryMib, diskGib: request.diskGib },
          },
        },
      )
    }
    const row = await insertAllocation(client, request)
    await appendEvent(client, {
      kind: 'allocation_reserved',
      nodeId: request.nodeId,
      data: {
        allocation_id: row.id,
        owner: row.owner,
        cpu: row.cpu,
        memory_mib: row.memoryMib,
        disk_gib: row.diskGib,
        actor: request.actor,
      },
    })
    return row
  })
}

/** Release one allocation with its event; ALLOCATION_UNKNOWN when there is no active one of that id. */
export async function releaseAllocationById(pool: Pool, id: string, actor: string): Promise<AllocationRow> {
  return withTransaction(pool, async (client) => {
    const row = await releaseAllocation(client, id, 'released')
    if (!row) {
      const stranded = isAllocationId(id)
        ? await client.query("SELECT 1 FROM allocations WHERE id = $1 AND status = 'stranded'", [id])
        : { rowCount: 0 }
      if ((stranded.rowCount ?? 0) > 0)
        throw new FleetkitError(
          'ALLOCATION_UNKNOWN',
          `allocation ${id} is stranded on a lost node of a stateful pool, not active: releasing it gives up the data it held`,
          {
            actions: [`fleetkit alloc release --stranded ${id} --yes`],
            data: { allocationId: id, status: 'stranded' },
          },
        )
      throw new FleetkitError(
        'ALLOCATION_UNKNOWN',
        `no active allocation ${JSON.stringify(id.slice(0, 64))} (unknown, or already released)`,
        { actions: ['fleetkit alloc list'], data: { allocationId: id.slice(0, 64) } },
      )
    }
    await appendEvent(client, {
      kind: 'allocation_released',
      nodeId: row.nodeId,
      data: { allocation_id: row.id, owner: row.owner, reason: 'released', actor },
    })
    return row
  })
}

/** The stranded allocations an operator named: one by its id, or every one of a node. */
export async function listStrandedAllocations(q: Queryable, target: string): Promise<AllocationRow[]> {
  const { rows } = await q.query<Raw>(
    `SELECT ${COLUMNS} FROM allocations
      WHERE status = 'stranded' AND (($1::uuid IS NOT NULL AND id = $1::uuid) OR ($1::uuid IS NULL AND node_id = $2))
      ORDER BY created_at, id LIMIT 10000`,
    [isAllocationId(target) ? target : null, target],
  )
  return rows.map(toAllocation)
}

/**
 * Release the given stranded allocations (those still stranded: one that resumed or was released
 * meanwhile is left as it is), one `allocation_released` event each with the actor, in one transaction.
 */
export async function releaseStrandedAllocations(
  pool: Pool,
  ids: readonly string[],
  actor: string,
): Promise<AllocationRow[]> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<Raw>(
      `UPDATE allocations SET status = 'released', released_at = now(), release_reason = 'stranded_released'
        WHERE id = ANY($1::uuid[]) AND status = 'stranded' RETURNING ${COLUMNS}`,
      [ids],
    )
    const released = rows.map(toAllocation).sort((a, b) => a.id.localeCompare(b.id))
    for (const row of released)
      await appendEvent(client, {
        kind: 'allocation_released',
        nodeId: row.nodeId,
        data: { allocation_id: row.id, owner: row.owner, reason: 'stranded_released', actor },
      })
    return released
  })
}

function round(n: number): number {
  return Math.round(n * 100) / 100
}
