// `fleetkit node list` and `node show`: the fleet as an operator sees it, read from the state
// database (heartbeat ages on the database's clock), shaped for --json and for a table.
import type { Queryable } from '../../store/database.js'
import { listNodeCertificates } from '../../store/pki/certificates.js'
import { listAllocations } from '../../store/scheduling/allocations.js'
import {
  type FleetFilter,
  type FleetNode,
  listFleet,
  listRecentJobs,
  listRecentNodeEvents,
} from '../../store/view/fleet.js'
import { NODE_STATUSES, type NodeStatus, type ProvisionState, type VolumeState } from '../../store/nodes/nodes.js'
import { provisionedAddress } from '../../render/node-address.js'
import { unknownNode } from '../node/node-transition.js'

interface NodeSummary {
  /** @minLength 1 */
  id: string
  pool: string
  region: string | null
  status: NodeStatus
  /** Jobs and reservations may land on it now: admitted and active (an unhealthy node is not). */
  schedulable: boolean
  /** Admitted by `node admit` (kept while unhealthy; a drain, a loss or a retirement ends it). */
  admitted: boolean
  /** `node provision`'s step; null for a node it did not provision (seeded, declared). */
  provisionState: ProvisionState | null
  /**
   * The node's Hetzner Cloud server, once created.
   * @asType integer
   * @nullable
   */
  serverId: number | null
  /** The Hetzner volume `node provision --volume` made for it; null without one. */
  volume: {
    /**
     * Null until the provider created it.
     * @asType integer
     * @nullable
     */
    id: number | null
    /** @asType integer */
    sizeGb: number
    state: VolumeState
    /** @pattern ^/dev/ */
    linuxDevice: string | null
  } | null
  /**
   * @minimum 0
   * @asType integer
   * @nullable
   */
  heartbeatAgeSeconds: number | null
  agentVersion: string | null
  /** @format date-time */
  certificateNotAfter: string | null
  capacity: {
    cpu: number | null
    /**
     * @asType integer
     * @nullable
     */
    memoryMib: number | null
    /**
     * @asType integer
     * @nullable
     */
    diskGib: number | null
  }
  reserved: {
    /** @minimum 0 */
    cpu: number
    /**
     * @minimum 0
     * @asType integer
     */
    memoryMib: number
    /**
     * @minimum 0
     * @asType integer
     */
    diskGib: number
    /**
     * @minimum 0
     * @asType integer
     */
    allocations: number
  }
  /**
   * @minimum 0
   * @asType integer
   */
  liveLeases: number
  /**
   * Its converged state as its agent last reported it against the fingerprint of its last sync
   * (docs/agent.md, "Drift"): `drifted` names the parts that differ (nft, sshd, unit, path ...);
   * `unknown` says why (not_reported: no agent digest judged yet; no_fingerprint; stale ...).
   */
  drift: {
    state: 'in_sync' | 'drifted' | 'unknown'
    parts: string[]
    reason: string | null
    /** @format date-time */
    since: string | null
  }
  /** A lost node's reclamation: when, how long it was silent, what was fenced and released. */
  lost: {
    /** @format date-time */
    lostAt: string | null
    silentSeconds: number | null
    /**
     * @minimum 0
     * @asType integer
     */
    fencedJobs: number
    /**
     * @minimum 0
     * @asType integer
     */
    releasedAllocations: number
    /** Its pool is stateful: its allocations were stranded at the loss instead of released. */
    stateful: boolean
    /**
     * Allocations stranded on it now: released only by `fleetkit alloc release --stranded`, or resumed when it heartbeats again.
     * @minimum 0
     * @asType integer
     */
    strandedAllocations: number
  } | null
  /** Its hands-off hold (`fleetkit node hold`): fleetkit reconcile leaves it alone; null when not held. */
  hold: {
    /** @minLength 1 */
    reason: string
    /** @minLength 1 */
    heldBy: string
    /** @format date-time */
    heldAt: string
  } | null
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
    admitted: n.admitted,
    provisionState: n.provisionState,
    serverId: n.providerServerId === null ? null : Number(n.providerServerId),
    volume:
      n.volumeState === null || n.volumeSizeGb === null
        ? null
        : {
            id: n.providerVolumeId === null ? null : Number(n.providerVolumeId),
            sizeGb: n.volumeSizeGb,
            state: n.volumeState,
            linuxDevice: n.volumeLinuxDevice,
          },
    heartbeatAgeSeconds: n.heartbeatAgeSeconds,
    agentVersion: n.hostAgentVersion,
    certificateNotAfter: n.certificateNotAfter?.toISOString() ?? null,
    capacity: { cpu: n.capacityCpu, memoryMib: n.capacityMemoryMib, diskGib: n.capacityDiskGib },
    reserved: n.reserved,
    liveLeases: n.liveLeases,
    drift: n.drift
      ? { state: n.drift.state, parts: n.drift.parts, reason: n.drift.reason, since: n.drift.since.toISOString() }
      : { state: 'unknown', parts: [], reason: 'not_reported', since: null },
    lost:
      n.status !== 'lost'
        ? null
        : {
            lostAt: n.lostAt?.toISOString() ?? null,
            silentSeconds: typeof lost?.silent_seconds === 'number' ? lost.silent_seconds : null,
            fencedJobs: Number(lost?.fenced_jobs ?? 0),
            releasedAllocations: Number(lost?.released_allocations ?? 0),
            stateful: lost?.stateful === true,
            strandedAllocations: n.strandedAllocations,
          },
    hold: n.hold && { reason: n.hold.reason, heldBy: n.hold.heldBy, heldAt: n.hold.heldAt.toISOString() },
  }
}

export interface NodeShowResult {
  node: NodeSummary & {
    /** Where the node is reached, as the state has it (node show reads no fleet.yaml). */
    address: {
      /**
       * The address fleetkit inventory, sync and drift reach the node at when fleetkit provisioned it:
       * its server's public IPv4, else its public IPv6 (the ::1 of the server's /64). Null for a node
       * fleetkit did not provision (reached at fleet.yaml's ssh.host) or whose server has no address yet.
       */
      ssh: string | null
      /** As `node provision` recorded them from the provider. */
      publicIpv4: string | null
      /** The server's IPv6 network, without its /64. */
      publicIpv6: string | null
      privateIpv4: string | null
    }
    facts: {
      /**
       * @asType integer
       * @nullable
       */
      cpuCount: number | null
      /**
       * @asType integer
       * @nullable
       */
      memoryMb: number | null
      dataDiskFreeGb: number | null
      kernel: string | null
      dockerVersion: string | null
      bridgeNetfilter: boolean | null
      /**
       * @asType integer
       * @nullable
       */
      clockSkewMs: number | null
      /** @format date-time */
      factsAt: string | null
    }
    /** @format date-time */
    lastSeenAt: string | null
    /** @format date-time */
    lostAt: string | null
    /** @format date-time */
    retiredAt: string | null
    /** @format date-time */
    createdAt: string
  }
  certificates: {
    /** @pattern ^[0-9a-f]{1,40}$ */
    serial: string
    /** @format date-time */
    notBefore: string
    /** @format date-time */
    notAfter: string
    revoked: boolean
    /** @format date-time */
    firstUsedAt: string | null
  }[]
  jobs: {
    /** @format uuid */
    id: string
    kind: string
    /** @pattern ^(queued|leased|succeeded|failed)$ */
    status: string
    /**
     * @minimum 0
     * @asType integer
     */
    attempts: number
    fenced: boolean
    /** @format date-time */
    updatedAt: string
  }[]
  allocations: {
    /** @format uuid */
    id: string
    owner: string
    cpu: number
    /** @asType integer */
    memoryMib: number
    /** @asType integer */
    diskGib: number
    /** Active, or stranded on a lost node of a stateful pool. */
    status: 'active' | 'stranded'
  }[]
  events: {
    /**
     * @minimum 1
     * @asType integer
     */
    id: number
    /** @format date-time */
    at: string
    /** @pattern ^[a-z][a-z0-9_]{0,63}$ */
    kind: string
    data: Record<string, unknown>
  }[]
}

export async function nodeShow(
  pool: Queryable,
  nodeId: string,
  options: { events?: number; jobs?: number } = {},
): Promise<NodeShowResult> {
  const [n] = await listFleet(pool, { nodeId })
  if (!n) throw await unknownNode(pool, nodeId)
  const certificates = await listNodeCertificates(pool, nodeId)
  const jobs = await listRecentJobs(pool, nodeId, options.jobs ?? 10)
  const allocations = [
    ...(await listAllocations(pool, { nodeId, status: 'active' })),
    ...(await listAllocations(pool, { nodeId, status: 'stranded' })),
  ]
  const events = await listRecentNodeEvents(pool, nodeId, options.events ?? 10)
  return {
    node: {
      ...summary(n),
      address: {
        ssh: provisionedAddress(n),
        publicIpv4: n.publicIpv4,
        publicIpv6: n.publicIpv6,
        privateIpv4: n.privateIpv4,
      },
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
      status: a.status === 'stranded' ? ('stranded' as const) : ('active' as const),
    })),
    events: events.map((e) => ({ id: e.id, at: e.at.toISOString(), kind: e.kind, data: e.data })),
  }
}
