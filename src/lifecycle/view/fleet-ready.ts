// `fleetkit fleet ready` and the status page's verdict: per pool and for the fleet, whether every node
// that should serve is admitted, healthy, converged for the current definition, not drifted and on
// the accepted agent version; each failing node with its code and the next command. Judged from the state.
import { createHash } from 'node:crypto'

import type { FailureCode } from '../../checks/failure-codes.js'
import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Definition } from '../../definition/types.js'
import type { Queryable } from '../../store/database.js'
import { type NodeReadinessFacts, lastSyncedDefinition, readinessFacts } from '../../store/view/readiness.js'
import { driftStateOf } from './node-drift.js'

type Criterion = 'admitted' | 'healthy' | 'converged' | 'drift' | 'agent_version'

interface ReadinessFailure {
  criterion: Criterion
  code: FailureCode
  /** What is wrong, in one line. */
  detail: string
  /** The command to run next. */
  next: string
}

interface NodeReadiness {
  nodeId: string
  pool: string
  /** Its status in the state; `unknown` when it is declared but not in the state. */
  status: string
  ready: boolean
  failures: ReadinessFailure[]
}

interface PoolReadiness {
  pool: string
  ready: boolean
  /**
   * Nodes that should serve in it.
   * @minimum 0
   * @asType integer
   */
  nodes: number
  /**
   * @minimum 0
   * @asType integer
   */
  readyNodes: number
}

export interface FleetReadyResult {
  ready: boolean
  /**
   * What "converged" is judged against: the SHA-256 of the definition file (`fleet ready`), or of the
   * definition the last finished sync applied (the status page); null when no sync ever finished.
   */
  definitionSha256: string | null
  /**
   * The agent version every node must run: the definition's release.version (a node with an `agentVersion` of its
   * own, its pin); null on the status page (each node's last sync).
   */
  acceptedAgentVersion: string | null
  pools: PoolReadiness[]
  /** Every node that should serve, ready or not. */
  nodes: NodeReadiness[]
}

/** Who should serve, and against what they are judged. */
interface Expectation {
  /** Declared nodes, their declared state and agent version pin; null on the status page (no definition). */
  declared: Map<string, { pool: string; state: string; agentVersion?: string | undefined }> | null
  /** The definition's pools, each listed even with no node; null: the pools the nodes are in. */
  pools: string[] | null
  definitionSha256: string | null
  /** null: each node's agent version is judged against the one its last sync converged it to. */
  acceptedAgentVersion: string | null
}

const CONVERGED: ReadonlySet<string> = new Set(['converged', 'changed'])

/** `fleetkit fleet ready --definition PATH`: the verdict against the definition file as it is now. */
export async function fleetReady(options: {
  pool: Queryable
  definition: Definition
  /** The file's text: its SHA-256 is what a `fleetkit sync` of it records. */
  definitionText: string
}): Promise<FleetReadyResult> {
  const { definition } = options
  const declared = new Map(
    definition.nodes.map((n) => [n.id, { pool: n.pool, state: n.state, agentVersion: n.agentVersion }]),
  )
  const pools = Object.keys(definition.pools)
  const facts = await readinessFacts(options.pool, {
    nodeIds: definition.nodes.filter((n) => n.state === 'active').map((n) => n.id),
    pools,
  })
  return judgeReadiness(facts, {
    declared,
    pools,
    definitionSha256: createHash('sha256').update(options.definitionText).digest('hex'),
    acceptedAgentVersion: definition.release.version,
  })
}

/** The status page's verdict, from the state alone: the last finished sync's definition is the current one. */
export async function stateReadiness(pool: Queryable): Promise<FleetReadyResult> {
  const applied = await lastSyncedDefinition(pool)
  const facts = await readinessFacts(pool, { nodeIds: [], pools: null })
  return judgeReadiness(facts, {
    declared: null,
    pools: null,
    definitionSha256: applied?.definitionSha256 ?? null,
    acceptedAgentVersion: null,
  })
}

function judgeReadiness(facts: NodeReadinessFacts[], expect: Expectation): FleetReadyResult {
  const found = new Map(facts.map((f) => [f.id, f]))
  const nodes: NodeReadiness[] = []
  // Declared active nodes the state does not have at all.
  for (const [id, d] of expect.declared ?? []) {
    if (d.state !== 'active' || found.has(id)) continue
    nodes.push({
      nodeId: id,
      pool: d.pool,
      status: 'unknown',
      ready: false,
      failures: [
        {
          criterion: 'admitted',
          code: 'NODE_UNKNOWN',
          detail: 'declared active, but not in the state database',
          // Runs as printed: the pool, region and server type come from fleet.yaml (node, then pool).
          next: `fleetkit node provision ${id}   (or fleetkit seed ${id} --kind agent)`,
        },
      ],
    })
  }
  for (const f of facts) {
    // A declared node serves only when declared active (drained and disabled nodes do not).
    const declaredState = expect.declared?.get(f.id)?.state
    if (declaredState !== undefined && declaredState !== 'active') continue
    const failures = judgeNode(f, expect)
    nodes.push({ nodeId: f.id, pool: f.pool, status: f.status, ready: failures.length === 0, failures })
  }
  nodes.sort((a, b) => a.pool.localeCompare(b.pool) || a.nodeId.localeCompare(b.nodeId))
  const poolNames = [...new Set([...(expect.pools ?? []), ...nodes.map((n) => n.pool)])].sort()
  const pools = poolNames.map((pool) => {
    const members = nodes.filter((n) => n.pool === pool)
    const readyNodes = members.filter((n) => n.ready).length
    return { pool, ready: readyNodes === members.length, nodes: members.length, readyNodes }
  })
  return {
    ready: pools.every((p) => p.ready),
    definitionSha256: expect.definitionSha256,
    acceptedAgentVersion: expect.acceptedAgentVersion,
    pools,
    nodes,
  }
}

function judgeNode(f: NodeReadinessFacts, expect: Expectation): ReadinessFailure[] {
  const id = f.id
  const out: ReadinessFailure[] = []
  const admitted = f.schedulable && (f.status === 'active' || f.status === 'unhealthy')
  if (!admitted) out.push(notAdmitted(f))
  if (f.status === 'unhealthy')
    out.push({
      criterion: 'healthy',
      code: 'NODE_SILENT',
      detail: `unhealthy: last heartbeat ${f.heartbeatAgeSeconds ?? '?'} s ago`,
      next: `fleetkit-agent doctor (on ${id})`,
    })
  if (f.status === 'lost')
    out.push({
      criterion: 'healthy',
      code: 'NODE_LOST',
      detail: `lost: last heartbeat ${f.heartbeatAgeSeconds === null ? 'never' : `${f.heartbeatAgeSeconds} s ago`}`,
      next: `fleetkit-agent doctor (on ${id})`,
    })
  if (f.checks && (f.checks.jobStatus === 'failed' || f.checks.failed.length > 0))
    out.push({
      criterion: 'healthy',
      code: 'NODE_CHECKS_FAILING',
      detail: `its latest host checks failed (${f.checks.jobStatus === 'failed' ? 'the job failed' : f.checks.failed.join(', ')})`,
      next: `fleetkit node check ${id}`,
    })
  const sync = f.lastSync
  if (!sync)
    out.push({
      criterion: 'converged',
      code: 'NODE_NOT_CONVERGED',
      detail: 'no fleetkit sync has converged it',
      next: 'fleetkit sync',
    })
  else if (!CONVERGED.has(sync.state))
    out.push({
      criterion: 'converged',
      code: 'NODE_NOT_CONVERGED',
      detail: `its last sync (run ${sync.runId}) ended ${sync.state}${sync.code ? ` (${sync.code})` : ''}`,
      next: sync.code ? `fleetkit runbook ${sync.code}` : 'fleetkit sync',
    })
  else if (expect.definitionSha256 !== null && sync.definitionSha256 !== expect.definitionSha256)
    out.push({
      criterion: 'converged',
      code: 'NODE_NOT_CONVERGED',
      detail:
        sync.definitionSha256 === null
          ? `its last sync (run ${sync.runId}) ran some roles only (--tags), and no whole sync converged it before`
          : `its last sync (run ${sync.runId}) applied another definition than the current one`,
      next: 'fleetkit sync',
    })
  const drift = f.lastDrift
  if (drift && drift.state === 'changed' && drift.runId > (sync?.runId ?? 0))
    out.push({
      criterion: 'drift',
      code: 'DRIFT_DETECTED',
      detail: `drift run ${drift.runId} found it differs from the definition since its last sync`,
      next: 'fleetkit drift   (what differs), then fleetkit sync',
    })
  // Drift as the agent sees it: its host no longer matches what its last sync recorded. A node whose
  // definition changed since is "behind" (the converged criterion above), not drifted.
  const agentDrift = driftStateOf(f, expect.definitionSha256)
  if (agentDrift.drift === 'drifted')
    out.push({
      criterion: 'drift',
      code: 'DRIFT_DETECTED',
      detail: `its agent reports ${agentDrift.parts.join(', ')} differ from what its last sync recorded${f.agentDrift?.fingerprintRunId == null ? '' : ` (run ${f.agentDrift.fingerprintRunId})`} since ${agentDrift.since?.toISOString() ?? '?'}`,
      next: 'fleetkit drift   (what differs), then fleetkit sync',
    })
  // A node pinned to a version of its own (the canary proving the next release) is judged against its pin.
  const accepted = expect.declared?.get(id)?.agentVersion ?? expect.acceptedAgentVersion ?? sync?.agentVersion ?? null
  if (accepted !== null && f.agentVersion !== accepted)
    out.push({
      criterion: 'agent_version',
      code: 'AGENT_VERSION_NOT_ACCEPTED',
      detail:
        f.agentVersion === null
          ? `no agent version reported (accepted: ${accepted})`
          : `runs agent ${f.agentVersion}, accepted: ${accepted}`,
      next: 'fleetkit sync   (its agent_update role installs the accepted version)',
    })
  return out
}

function notAdmitted(f: NodeReadinessFacts): ReadinessFailure {
  const id = f.id
  const by: Record<string, { code: FailureCode; next: string }> = {
    active: { code: 'NODE_NOT_SCHEDULABLE', next: `fleetkit node admit ${id}` },
    unhealthy: { code: 'NODE_NOT_SCHEDULABLE', next: `fleetkit node admit ${id}` },
    lost: {
      code: 'NODE_LOST',
      next: `fleetkit-agent doctor (on ${id}); once it heartbeats, fleetkit node admit ${id}`,
    },
    provisioning: { code: 'NODE_NOT_SCHEDULABLE', next: `fleetkit node show ${id}   (waiting to enroll)` },
    failed: { code: 'NODE_STATE_CONFLICT', next: `fleetkit node token ${id} --reissue` },
    draining: { code: 'NODE_STATE_CONFLICT', next: `fleetkit node undrain ${id}` },
    parked: { code: 'NODE_STATE_CONFLICT', next: `fleetkit node unpark ${id}` },
    retired: { code: 'NODE_STATE_CONFLICT', next: `fleetkit node show ${id}   (retired: declare another node)` },
  }
  const { code, next } = by[f.status] ?? { code: 'NODE_STATE_CONFLICT' as const, next: `fleetkit node show ${id}` }
  return { criterion: 'admitted', code, detail: `${f.status}, ${f.schedulable ? 'admitted' : 'not admitted'}`, next }
}

/** The terminal lines: a line per pool, a line per failure of each failing node, the fleet's verdict last. */
export function formatReadiness(result: FleetReadyResult): string[] {
  const lines: string[] = []
  for (const p of result.pools) {
    lines.push(
      `pool ${p.pool}: ${p.ready ? 'ready' : 'NOT READY'} (${p.readyNodes} of ${p.nodes} node(s) that should serve are ready)`,
    )
    for (const n of result.nodes.filter((x) => x.pool === p.pool && !x.ready))
      for (const fail of n.failures)
        lines.push(`  ${n.nodeId}: ${fail.criterion} ${fail.code}: ${fail.detail}; next: ${fail.next}`)
  }
  const failing = result.nodes.filter((n) => !n.ready).length
  lines.push(
    result.ready
      ? `fleet: ready (${result.nodes.length} node(s) admitted, healthy, converged, not drifted, on the accepted agent version)`
      : `fleet: NOT READY (${failing} of ${result.nodes.length} node(s) that should serve are not ready)`,
  )
  return lines
}

/** The refusal `fleet ready` exits with when the fleet is not ready: FLEET_NOT_READY, exit 3, the verdict in data. */
export function notReadyError(result: FleetReadyResult): FleetkitError {
  const failing = result.nodes.filter((n) => !n.ready)
  const nexts = [...new Set(failing.flatMap((n) => n.failures.map((f) => f.next)))]
  return new FleetkitError(
    'FLEET_NOT_READY',
    `${failing.length} node(s) that should serve are not ready: ${failing.map((n) => `${n.nodeId} (${n.failures.map((f) => f.criterion).join(', ')})`).join(', ')}`,
    { actions: nexts.slice(0, 8), data: { verdict: result } },
  )
}
