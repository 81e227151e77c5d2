// `fleetkit node list` and `node show`: the fleet as an operator sees it, read from the state
// database (heartbeat ages on the database's clock), shaped for --json and for a table.
import type { Queryable } from '../store/database.js'
import { listNodeCertificates } from '../store/certificates.js'
import { listAllocations } from '../store/allocations.js'
import { type FleetFilter, type FleetNode, listFleet, listRecentJobs, listRecentNodeEvents } from '../store/fleet.js'
import { NODE_STATUSES, type NodeStatus } from '../store/nodes.js'
import { unknownNode } from './node-transition.js'

interface NodeSummary {
  id: string
  pool: string
  region: string | null
  status: NodeStatus
  schedulable: boolean
  heartbeatAgeSeconds: number | null
  agentVersion: string | null
  certificateNotAfter: string | null
  capacity: { cpu: number | null; memoryMib: number | null; diskGib: number | null }
  reserved: { cpu: number; memoryMib: number; diskGib: number; allocations: number }
  liveLeases: number
  /** A lost node's reclamation: when, how long it was silent, what was fenced and released. */
  lost: { lostAt: string | null; silentSeconds: number | null; fencedJobs: number; releasedAllocations: number } | null
}

export interface NodeListResult {
  nodes: NodeSummary[]
  counts: Record<NodeStatus, number>
}

export async function nodeList(pool: Queryable, filter: FleetFilter = {}): Promise<NodeListResult> {
  const rows = await listFleet(pool, filter)
  const counts = Object.fromEntries(NODE_STATUSES.map((s) => [s, 0])) as Record<NodeStatus, number>
  for (const row of rows) counts[row.status] += 1
  return { nodes: rows.map(summary), counts }
}

function summary(n: FleetNode): NodeSummary {
  const lost = n.lostReclamation
  return {
    id: n.id,
    pool: n.pool,
    region: n.region,
    status: n.status,
    schedulable: n.schedulable,
    heartbeatAgeSeconds: n.heartbeatAgeSeconds,
    agentVersion: n.hostAgentVersion,
    certificateNotAfter: n.certificateNotAfter?.toISOString() ?? null,
    capacity: { cpu: n.capacityCpu, memoryMib: n.capacityMemoryMib, diskGib: n.capacityDiskGib },
    reserved: n.reserved,
    liveLeases: n.liveLeases,
    lost:
      n.status !== 'lost'
        ? null
        : {
            lostAt: n.lostAt?.toISOString() ?? null,
            silentSeconds: typeof lost?.silent_seconds === 'number' ? lost.silent_seconds : null,
            fencedJobs: Number(lost?.fenced_jobs ?? 0),
            releasedAllocations: Number(lost?.released_allocations ?? 0),
          },
  }
}

export interface NodeShowResult {
  node: NodeSummary & {
    facts: {
      cpuCount: number | null
      memoryMb: number | null
      dataDiskFreeGb: number | null
      kernel: string | null
      dockerVersion: string | null
      bridgeNetfilter: boolean | null
      clockSkewMs: number | null
      factsAt: string | null
    }
    lastSeenAt: string | null
    lostAt: string | null
    retiredAt: string | null
    createdAt: string
  }
  certificates: { serial: string; notBefore: string; notAfter: string; revoked: boolean; firstUsedAt: string | null }[]
  jobs: { id: string; kind: string; status: string; attempts: number; fenced: boolean; updatedAt: string }[]
  allocations: { id: string; owner: string; cpu: number; memoryMib: number; diskGib: number; status: string }[]
  events: { id: number; at: string; kind: string; data: Record<string, unknown> }[]
}

export async function nodeShow(
  pool: Queryable,
  nodeId: string,
  options: { events?: number; jobs?: number } = {},
): Promise<NodeShowResult> {
  const [n] = await listFleet(pool, { nodeId })
  if (!n) throw unknownNode(nodeId)
  const certificates = await listNodeCertificates(pool, nodeId)
  const jobs = await listRecentJobs(pool, nodeId, options.jobs ?? 10)
  const allocations = await listAllocations(pool, { nodeId, status: 'active' })
  const events = await listRecentNodeEvents(pool, nodeId, options.events ?? 10)
  return {
    node: {
      ...summary(n),
      facts: {
        cpuCount: n.hostCpuCount,
        memoryMb: n.hostMemoryMb,
        dataDiskFreeGb: n.hostDataDiskFreeGb,
        kernel: n.hostKernel,
        dockerVersion: n.hostDockerVersion,
        bridgeNetfilter: n.hostBridgeNetfilter,
        clockSkewMs: n.hostClockSkewMs,
        factsAt: n.hostFactsAt?.toISOString() ?? null,
      },
      lastSeenAt: n.lastSeenAt?.toISOString() ?? null,
      lostAt: n.lostAt?.toISOString() ?? null,
      retiredAt: n.retiredAt?.toISOString() ?? null,
      createdAt: n.createdAt.toISOString(),
    },
    certificates: certificates.map((c) => ({
      serial: c.serial,
      notBefore: c.notBefore.toISOString(),
      notAfter: c.notAfter.toISOString(),
      revoked: c.revokedAt !== null,
      firstUsedAt: c.firstUsedAt?.toISOString() ?? null,
    })),
    jobs: jobs.map((j) => ({
      id: j.id,
      kind: j.kind,
      status: j.status,
      attempts: j.attempts,
      fenced: j.fenced,
      updatedAt: j.updatedAt.toISOString(),
    })),
    allocations: allocations.map((a) => ({
      id: a.id,
      owner: a.owner,
      cpu: a.cpu,
      memoryMib: a.memoryMib,
      diskGib: a.diskGib,
      status: a.status,
    })),
    events: events.map((e) => ({ id: e.id, at: e.at.toISOString(), kind: e.kind, data: e.data })),
  }
}

/** One table line per node; a lost node also gets a line with its reclamation. */
export function formatNodeTable(result: NodeListResult): string[] {
  const header = [
    'NODE',
    'POOL',
    'REGION',
    'STATUS',
    'SCHED',
    'HEARTBEAT',
    'AGENT',
    'CERT EXPIRES',
    'CPU',
    'MEM MiB',
    'DISK GiB',
  ]
  const rows = result.nodes.map((n) => [
    n.id,
    n.pool,
    n.region ?? '-',
    n.status,
    n.schedulable ? 'yes' : 'no',
    n.heartbeatAgeSeconds === null ? 'never' : `${age(n.heartbeatAgeSeconds)} ago`,
    n.agentVersion ?? '-',
    n.certificateNotAfter?.slice(0, 16).replace('T', ' ') ?? '-',
    `${n.reserved.cpu}/${n.capacity.cpu ?? '?'}`,
    `${n.reserved.memoryMib}/${n.capacity.memoryMib ?? '?'}`,
    `${n.reserved.diskGib}/${n.capacity.diskGib ?? '?'}`,
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()
  const out = [line(header)]
  result.nodes.forEach((n, i) => {
    out.push(line(rows[i]!))
    if (n.lost)
      out.push(
        `  lost ${n.lost.lostAt ?? '?'} after ${n.lost.silentSeconds ?? '?'} s silent: ${n.lost.fencedJobs} job(s) fenced, ${n.lost.releasedAllocations} allocation(s) released`,
      )
  })
  return out
}

export function age(seconds: number): string {
  if (seconds < 120) return `${seconds}s`
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`
  if (seconds < 172_800) return `${Math.round(seconds / 3600)}h`
  return `${Math.round(seconds / 86400)}d`
}
