// The status page's data (GET /v1/operator/status.json): the fleet by pool, each node with what an
// operator looks at first, the gateway's own request rate and latency, and the newest events.
// Every field is chosen here, by name: nothing of a row reaches the page that is not listed (no
// key, hash, token or secret is ever among them).
import type { Queryable } from '../../store/database.js'
import { type FleetNode, listFleet } from '../../store/view/fleet.js'
import { lastSyncPerNode, latestCheckSummaries, latestEvents } from '../../store/view/status-view.js'
import type { GatewayMetrics } from '../metrics/metrics.js'

interface StatusNode {
  id: string
  status: string
  schedulable: boolean
  heartbeatAgeSeconds: number | null
  agentVersion: string | null
  certificateNotAfter: string | null
  clockSkewMs: number | null
  diskFreeGb: number | null
  capacity: { cpu: number | null; memoryMib: number | null; diskGib: number | null }
  reserved: { cpu: number; memoryMib: number; diskGib: number; allocations: number }
  checks: {
    jobStatus: string
    pass: number
    warn: number
    fail: number
    /** Neither passed nor failed: checks that do not apply (a declared container's kernel checks). */
    notApplicable: number
    finishedAt: string
  } | null
  lastSync: { runId: number; state: string; finishedAt: string | null } | null
  /** Its drift as its agent last reported it (unknown with reason not_reported when never judged). */
  drift: { state: string; parts: string[]; reason: string | null; since: string | null }
}

/** What the page shows of the readiness verdict (src/lifecycle/view/fleet-ready.ts FleetReadyResult, structurally). */
interface StatusReadiness {
  ready: boolean
  pools: { pool: string; ready: boolean; nodes: number; readyNodes: number }[]
  nodes: {
    nodeId: string
    pool: string
    ready: boolean
    failures: { criterion: string; code: string; detail: string; next: string }[]
  }[]
}

/** The verdict from the state alone, given to the gateway by `fleetkit gateway serve` (the lifecycle is above it). */
export type ReadinessFunction = (pool: Queryable) => Promise<StatusReadiness>

export interface StatusDocument {
  generatedAt: string
  /** Whether every node that should serve is ready, per pool; only the failing nodes listed. Null when not given. */
  readiness: {
    ready: boolean
    pools: StatusReadiness['pools']
    failing: StatusReadiness['nodes']
  } | null
  pools: { name: string; nodes: StatusNode[] }[]
  gateway: {
    /** Requests a second by listener, over the window since the previous status read (or since start). */
    requestsPerSecond: Record<string, number>
    windowSeconds: number
    /** From the request-duration histogram over the same window: the upper bound of the bucket holding each quantile. */
    latencySeconds: { p50: number | null; p99: number | null }
  }
  events: { id: number; at: string; kind: string; nodeId: string | null; summary: string }[]
}

interface Sample {
  atMs: number
  byListener: Map<string, number>
  histogram: ReturnType<GatewayMetrics['requestSeconds']['snapshot']>
}

/** Rates between consecutive reads; one per gateway process (the page polls every few seconds). */
export class RequestRateWindow {
  private previous: Sample

  constructor(
    private readonly metrics: GatewayMetrics,
    nowMs: number,
  ) {
    this.previous = { atMs: nowMs, byListener: new Map(), histogram: { count: 0, sum: 0, buckets: [] } }
  }

  read(nowMs: number): StatusDocument['gateway'] {
    const current: Sample = {
      atMs: nowMs,
      byListener: byListener(this.metrics),
      histogram: this.metrics.requestSeconds.snapshot(),
    }
    const windowSeconds = Math.max(0.001, (current.atMs - this.previous.atMs) / 1000)
    const requestsPerSecond: Record<string, number> = {}
    for (const [listener, count] of current.byListener) {
      const delta = count - (this.previous.byListener.get(listener) ?? 0)
      requestsPerSecond[listener] = Math.round((delta / windowSeconds) * 100) / 100
    }
    const latencySeconds = quantiles(this.previous.histogram, current.histogram)
    this.previous = current
    return { requestsPerSecond, windowSeconds: Math.round(windowSeconds * 10) / 10, latencySeconds }
  }
}

function byListener(metrics: GatewayMetrics): Map<string, number> {
  const out = new Map<string, number>()
  for (const [key, value] of metrics.requests.values) {
    const listener = /(?:^|,)listener="([^"]*)"/.exec(key)?.[1] ?? 'other'
    out.set(listener, (out.get(listener) ?? 0) + value)
  }
  return out
}

function quantiles(
  before: Sample['histogram'],
  after: Sample['histogram'],
): { p50: number | null; p99: number | null } {
  const total = after.count - before.count
  if (total <= 0) return { p50: null, p99: null }
  const at = (q: number) => {
    const wanted = q * total
    for (const [i, bucket] of after.buckets.entries()) {
      const inWindow = bucket.count - (before.buckets[i]?.count ?? 0)
      if (inWindow >= wanted) return Number.isFinite(bucket.le) ? bucket.le : null
    }
    return null
  }
  return { p50: at(0.5), p99: at(0.99) }
}

/** One line of an event's data, for the page: key=value pairs of scalars, cut short. */
function summarise(data: Record<string, unknown>): string {
  return Object.entries(data)
    .filter(([, v]) => v === null || ['string', 'number', 'boolean'].includes(typeof v))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ')
    .slice(0, 200)
}

function node(
  n: FleetNode,
  checks: Map<string, StatusNode['checks']>,
  syncs: Map<string, StatusNode['lastSync']>,
): StatusNode {
  return {
    id: n.id,
    status: n.status,
    schedulable: n.schedulable,
    heartbeatAgeSeconds: n.heartbeatAgeSeconds === null ? null : Math.max(0, Math.round(n.heartbeatAgeSeconds)),
    agentVersion: n.hostAgentVersion,
    certificateNotAfter: n.certificateNotAfter?.toISOString() ?? null,
    clockSkewMs: n.hostClockSkewMs,
    diskFreeGb: n.hostDataDiskFreeGb,
    capacity: { cpu: n.capacityCpu, memoryMib: n.capacityMemoryMib, diskGib: n.capacityDiskGib },
    reserved: n.reserved,
    checks: checks.get(n.id) ?? null,
    lastSync: syncs.get(n.id) ?? null,
    drift: n.drift
      ? { state: n.drift.state, parts: n.drift.parts, reason: n.drift.reason, since: n.drift.since.toISOString() }
      : { state: 'unknown', parts: [], reason: 'not_reported', since: null },
  }
}

export async function statusDocument(
  q: Queryable,
  window: RequestRateWindow,
  now: Date,
  readiness?: ReadinessFunction,
): Promise<StatusDocument> {
  const [fleet, checkRows, syncRows, eventRows] = [
    await listFleet(q),
    await latestCheckSummaries(q),
    await lastSyncPerNode(q),
    await latestEvents(q, 20),
  ]
  const verdict = readiness ? await readiness(q) : undefined
  const checks = new Map(
    checkRows.map((c) => [
      c.nodeId,
      {
        jobStatus: c.jobStatus,
        pass: c.pass,
        warn: c.warn,
        fail: c.fail,
        notApplicable: c.notApplicable,
        finishedAt: c.finishedAt.toISOString(),
      },
    ]),
  )
  const syncs = new Map(
    syncRows.map((s) => [
      s.nodeId,
      { runId: s.runId, state: s.state, finishedAt: s.finishedAt?.toISOString() ?? null },
    ]),
  )
  const pools = new Map<string, StatusNode[]>()
  for (const n of fleet) {
    const list = pools.get(n.pool) ?? []
    list.push(node(n, checks, syncs))
    pools.set(n.pool, list)
  }
  return {
    generatedAt: now.toISOString(),
    // Field by field, like the rest: nothing of the verdict reaches the page that is not named here.
    readiness: verdict
      ? {
          ready: verdict.ready,
          pools: verdict.pools.map((p) => ({ pool: p.pool, ready: p.ready, nodes: p.nodes, readyNodes: p.readyNodes })),
          failing: verdict.nodes
            .filter((n) => !n.ready)
            .map((n) => ({
              nodeId: n.nodeId,
              pool: n.pool,
              ready: n.ready,
              failures: n.failures.map((f) => ({
                criterion: f.criterion,
                code: f.code,
                detail: f.detail,
                next: f.next,
              })),
            })),
        }
      : null,
    pools: [...pools.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, nodes]) => ({ name, nodes })),
    gateway: window.read(now.getTime()),
    events: eventRows.map((e) => ({
      id: e.id,
      at: e.at.toISOString(),
      kind: e.kind,
      nodeId: e.nodeId,
      summary: summarise(e.data),
    })),
  }
}
