// `fleetkit node admit NODE`: make a node schedulable only if it is active (or a lost node that
// is talking again), heartbeated within 60 s on the database's clock, not failing its checks (a
// warning only when a person accepts it by name), and with capacity. Every condition is checked
// before anything is written.
import type { StatePool } from '../../store/transaction.js'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { appendEvent } from '../../store/events.js'
import { latestChecksJob, recordNodeCapacity, writeNodeLifecycle } from '../../store/nodes/node-lifecycle.js'
import { isReturningLost, stateConflict, transition, type TransitionResult, withLockedNode } from './node-transition.js'
import { ADMIT_FRESH_SECONDS } from './thresholds.js'

export interface AdmitOptions {
  pool: StatePool
  nodeId: string
  actor: string
  /** Capacity from the definition (maxCapacity, else the server type less the host reserve), recorded before the check. */
  capacity?: { cpu: number; memoryMib: number; diskGib: number }
  /** Check IDs whose warning the operator accepts (`--accept-warn host:data-volume`); recorded in the event. */
  acceptWarn?: readonly string[]
}

export async function admitNode(options: AdmitOptions): Promise<TransitionResult> {
  const { nodeId } = options
  return withLockedNode(options.pool, nodeId, async (client, node) => {
    const returning = isReturningLost(node)
    // A lost node leases no checks job: `node undrain` first makes it active (not schedulable) so one can run.
    const checkAgain = returning
      ? [
          `fleetkit node undrain ${nodeId}   (lost, heard from again: active, not schedulable, so its checks can run)`,
          `fleetkit node check ${nodeId}`,
        ]
      : [`fleetkit node check ${nodeId}`]
    if (node.status !== 'active' && !returning) {
      throw stateConflict(
        node,
        'admit',
        ['active', 'lost (heard from since it was lost)'],
        node.status === 'unhealthy'
          ? `fleetkit-agent doctor (on ${nodeId})`
          : node.status === 'draining'
            ? `fleetkit node undrain ${nodeId}   (back to active; then admit it)`
            : node.status === 'parked'
              ? `fleetkit node unpark ${nodeId}`
              : undefined,
      )
    }
    if (node.silentSeconds === null || node.silentSeconds > ADMIT_FRESH_SECONDS) {
      const when =
        node.silentSeconds === null ? 'never heartbeated' : `last heartbeated ${Math.round(node.silentSeconds)} s ago`
      throw new FleetkitError(
        'NODE_SILENT',
        `cannot admit ${nodeId}: it ${when} (admit needs a heartbeat within ${ADMIT_FRESH_SECONDS} s)`,
        {
          actions: [`fleetkit-agent doctor (on ${nodeId})`, `fleetkit node show ${nodeId}`],
          data: {
            nodeId,
            silentSeconds: node.silentSeconds === null ? null : Math.round(node.silentSeconds),
            limitSeconds: ADMIT_FRESH_SECONDS,
          },
        },
      )
    }
    const checks = await latestChecksJob(client, nodeId)
    const failing = checks ? checksWith(checks, 'fail') : []
    if (failing.length > 0) {
      throw new FleetkitError(
        'NODE_CHECKS_FAILING',
        `cannot admit ${nodeId}: its latest host checks failed (${failing.join(', ')})`,
        {
          actions: [...checkAgain, 'fleetkit checks'],
          data: { nodeId, jobId: checks!.id, failing },
        },
      )
    }
    const warned = checks ? checksWith(checks, 'warn') : []
    const accepted = new Set(options.acceptWarn ?? [])
    const unaccepted = warned.filter((id) => !accepted.has(id))
    if (unaccepted.length > 0) {
      const flags = warned.map((id) => `--accept-warn ${id}`).join(' ')
      throw new FleetkitError(
        'NODE_CHECKS_WARNING',
        `cannot admit ${nodeId}: its latest host checks warned (${unaccepted.join(', ')}); a person accepts each warning by name, or fixes it and checks again`,
        {
          actions: [...checkAgain, `fleetkit node admit ${nodeId} ${flags}   (accepting, on purpose)`],
          data: { nodeId, jobId: checks!.id, warned, unaccepted },
        },
      )
    }
    const acceptedWarnings = warned.filter((id) => accepted.has(id))
    const capacity =
      options.capacity ??
      (node.capacityCpu === null || node.capacityMemoryMib === null || node.capacityDiskGib === null
        ? undefined
        : { cpu: node.capacityCpu, memoryMib: node.capacityMemoryMib, diskGib: node.capacityDiskGib })
    if (!capacity || capacity.cpu <= 0 || capacity.memoryMib <= 0 || capacity.diskGib <= 0) {
      throw new FleetkitError('NODE_CAPACITY_UNKNOWN', `cannot admit ${nodeId}: no capacity is recorded for it`, {
        actions: [
          `fleetkit node admit ${nodeId} --definition fleet.yaml (with maxCapacity or a serverType for the node)`,
        ],
        data: { nodeId, capacity: capacity ?? null },
      })
    }
    // Already admitted with this capacity: a second run (or one of several at once, each waiting on
    // the row lock) finds the node where it wanted it and writes nothing, not even an event.
    const recorded = { cpu: node.capacityCpu, memoryMib: node.capacityMemoryMib, diskGib: node.capacityDiskGib }
    const newCapacity =
      options.capacity !== undefined &&
      (recorded.cpu !== capacity.cpu ||
        recorded.memoryMib !== capacity.memoryMib ||
        recorded.diskGib !== capacity.diskGib)
    const shown = `cpu ${capacity.cpu}, memory ${capacity.memoryMib} MiB, disk ${capacity.diskGib} GiB`
    if (node.status === 'active' && node.schedulable && !returning && !newCapacity) {
      return {
        ...transition(node, 'admit', node, ''),
        message: `${nodeId}: already admitted (${shown}); nothing changed`,
      }
    }
    if (newCapacity) await recordNodeCapacity(client, nodeId, capacity)
    const after = await writeNodeLifecycle(client, nodeId, {
      status: 'active',
      schedulable: true,
      clearLost: returning,
    })
    const result = transition(
      node,
      'admit',
      after,
      node.schedulable && node.status === 'active'
        ? `${nodeId}: already admitted; its capacity is now ${shown}`
        : `${nodeId}: admitted, schedulable with ${shown}${returning ? ' (back from lost)' : ''}`,
    )
    // A new capacity of an admitted node is a change too: written, and recorded as an admission.
    result.changed = true
    await appendEvent(client, {
      kind: 'node_admitted',
      nodeId,
      data: {
        from: node.status,
        capacity: { cpu: capacity.cpu, memory_mib: capacity.memoryMib, disk_gib: capacity.diskGib },
        ...(acceptedWarnings.length > 0 ? { accepted_warnings: acceptedWarnings } : {}),
        actor: options.actor,
      },
    })
    return result
  })
}

/** Check IDs with this status in a finished checks job; for `fail`, the job itself when it failed. */
function checksWith(
  job: { status: string; result: Record<string, unknown> | null },
  status: 'fail' | 'warn',
): string[] {
  if (job.status === 'failed') return status === 'fail' ? ['job failed'] : []
  const checks = Array.isArray(job.result?.checks) ? (job.result.checks as { id?: unknown; status?: unknown }[]) : []
  return checks.filter((c) => c.status === status).map((c) => String(c.id).slice(0, 64))
}
