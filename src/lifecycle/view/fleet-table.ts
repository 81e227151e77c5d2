// How `fleetkit node list` and `node show` print the fleet view (src/lifecycle/view/fleet-view.ts builds it)
// on a terminal: the node table, a node's provisioning and address, ages.
import type { NodeListResult, NodeShowResult } from './fleet-view.js'

type NodeSummary = NodeListResult['nodes'][number]

/**
 * The PROVISION cell: the recorded step, or for a node retired before it enrolled `ended:STEP`, so a
 * decommissioned run does not look as if it still waited (--json keeps the recorded step).
 */
export function provisionCell(n: Pick<NodeSummary, 'status' | 'provisionState'>): string {
  if (n.provisionState === null) return '-'
  const unfinished = n.provisionState !== 'enrolled' && n.provisionState !== 'failed'
  return n.status === 'retired' && unfinished ? `ended:${n.provisionState}` : n.provisionState
}

/** `enrolled, server 4711, volume 4712 (50 GB, attached as /dev/...)`: what node show prints of it. */
export function describeProvision(n: NodeSummary): string {
  if (n.provisionState === null && n.serverId === null) return 'not provisioned by fleetkit'
  const cell = provisionCell(n)
  const parts = [cell.startsWith('ended:') ? `ended at ${n.provisionState} (retired before it enrolled)` : cell]
  if (n.serverId !== null) parts.push(`server ${n.serverId}`)
  if (n.volume)
    parts.push(
      `volume ${n.volume.id ?? '(not created)'} (${n.volume.sizeGb} GB, ${n.volume.state}${n.volume.linuxDevice ? ` as ${n.volume.linuxDevice}` : ''})`,
    )
  return parts.join(', ')
}

/** `node show`'s address line: where sync reaches the node, and the server's recorded addresses. */
export function describeAddress(a: NodeShowResult['node']['address']): string {
  const recorded = [
    a.publicIpv4 === null ? null : `public IPv4 ${a.publicIpv4}`,
    a.publicIpv6 === null ? null : `public IPv6 ${a.publicIpv6}/64`,
    a.privateIpv4 === null ? null : `private IPv4 ${a.privateIpv4}`,
  ].filter((x) => x !== null)
  const ssh =
    a.ssh === null
      ? 'ssh.host of fleet.yaml (no provisioned server address)'
      : `ssh ${a.ssh} (the server fleetkit provisioned)`
  return recorded.length === 0 ? ssh : `${ssh}; ${recorded.join(', ')}`
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
    'DRIFT',
    'CPU',
    'MEM MiB',
    'DISK GiB',
    'PROVISION',
    'SERVER',
    'VOLUME',
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
    driftCell(n.drift),
    `${n.reserved.cpu}/${n.capacity.cpu ?? '?'}`,
    `${n.reserved.memoryMib}/${n.capacity.memoryMib ?? '?'}`,
    `${n.reserved.diskGib}/${n.capacity.diskGib ?? '?'}`,
    provisionCell(n),
    n.serverId === null ? '-' : String(n.serverId),
    n.volume ? `${n.volume.id ?? '?'} ${n.volume.sizeGb}GB ${n.volume.state}` : '-',
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
    if (n.lost) out.push(`  lost ${lostReclamationText(n.id, n.lost)}`)
    if (n.hold) out.push(`  held ${holdText(n.hold)}`)
  })
  return out
}

/** The DRIFT column: `in sync`, `drifted:nft,sshd` or `unknown` (node show gives the reason). */
function driftCell(drift: NodeSummary['drift']): string {
  if (drift.state === 'drifted') return `drifted:${drift.parts.join(',')}`
  return drift.state === 'in_sync' ? 'in sync' : 'unknown'
}

/** node show's drift line: the state, what differs or why unknown, and since when. */
export function describeDrift(drift: NodeSummary['drift']): string {
  const since = drift.since ? ` since ${drift.since}` : ''
  if (drift.state === 'drifted')
    return `DRIFTED: ${drift.parts.join(', ')} differ from its last sync's fingerprint${since}; next: fleetkit drift, then fleetkit sync`
  if (drift.state === 'in_sync') return `in sync with its last sync's fingerprint${since}`
  return `unknown (${drift.reason ?? 'not_reported'})${since}`
}

/** A lost node's reclamation in one line (node list, node show): what was fenced, released or stranded. */
export function lostReclamationText(nodeId: string, lost: NonNullable<NodeSummary['lost']>): string {
  const head = `${lost.lostAt ?? '?'} after ${lost.silentSeconds ?? '?'} s silent: ${lost.fencedJobs} job(s) fenced, `
  if (!lost.stateful) return `${head}${lost.releasedAllocations} allocation(s) released`
  return lost.strandedAllocations === 0
    ? `${head}stateful pool: none stranded now (resumed or released)`
    : `${head}stateful pool: ${lost.strandedAllocations} allocation(s) stranded, a person decides: fleetkit alloc release --stranded ${nodeId} --yes, or the node heartbeats again and they resume`
}

/** A hold in one line (node list, node show): who, since when, why. */
export function holdText(hold: NonNullable<NodeSummary['hold']>): string {
  return `by ${hold.heldBy} since ${hold.heldAt}: ${hold.reason} (fleetkit reconcile leaves it alone)`
}

export function age(seconds: number): string {
  if (seconds < 120) return `${seconds}s`
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`
  if (seconds < 172_800) return `${Math.round(seconds / 3600)}h`
  return `${Math.round(seconds / 86400)}d`
}
