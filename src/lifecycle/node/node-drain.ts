// `fleetkit node drain NODE [--wait S]`: no new leases (403) and no new reservations while the
// jobs it holds finish and report; with --wait, until no lease on it is live. `node undrain` takes it back.
import type { StatePool } from '../../store/transaction.js'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Clock } from '../../config/clock.js'
import { appendEvent } from '../../store/events.js'
import { nodeHoldings, writeNodeLifecycle } from '../../store/nodes/node-lifecycle.js'
import { isReturningLost, stateConflict, transition, type TransitionResult, withLockedNode } from './node-transition.js'
import { waitFor, type WaitOptions } from '../wait.js'

export interface DrainResult extends TransitionResult {
  activeAllocations: string[]
  liveLeases: string[]
  /**
   * @minimum 0
   * @asType integer
   */
  waitedSeconds?: number
}

const DRAINABLE = ['active', 'unhealthy', 'draining'] as const

export async function drainNode(
  options: { pool: StatePool; nodeId: string; actor: string; clock: Clock; waitSeconds?: number } & WaitOptions,
): Promise<DrainResult> {
  const { pool, nodeId } = options
  const result = await withLockedNode(pool, nodeId, async (client, node) => {
    if (!(DRAINABLE as readonly string[]).includes(node.status)) throw stateConflict(node, 'drain', DRAINABLE)
    const after = await writeNodeLifecycle(client, nodeId, { status: 'draining', schedulable: false })
    const holdings = await nodeHoldings(client, nodeId)
    const t = transition(
      node,
      'drain',
      after,
      node.status === 'draining'
        ? `${nodeId}: already draining; nothing changed`
        : `${nodeId}: draining (was ${node.status}): no new leases or reservations; ${holdings.liveLeases.length} live lease(s), ${holdings.activeAllocations.length} active allocation(s)`,
    )
    if (t.changed)
      await appendEvent(client, {
        kind: 'node_draining',
        nodeId,
        data: {
          from: node.status,
          live_leases: holdings.liveLeases.length,
          active_allocations: holdings.activeAllocations.length,
          actor: options.actor,
        },
      })
    return { ...t, activeAllocations: holdings.activeAllocations, liveLeases: holdings.liveLeases }
  })
  if (options.waitSeconds === undefined) return result
  const started = options.clock.now().getTime()
  const last = await waitFor({
    ...options,
    timeoutSeconds: options.waitSeconds,
    probe: () => nodeHoldings(pool, nodeId),
    done: (h) => h.liveLeases.length === 0,
  })
  if (!last.done) {
    throw new FleetkitError(
      'NODE_WAIT_TIMEOUT',
      `${nodeId} is draining but ${last.value.liveLeases.length} lease(s) are still live after ${options.waitSeconds} s`,
      {
        actions: [`fleetkit node show ${nodeId}`, `fleetkit node drain ${nodeId} --wait ${options.waitSeconds * 2}`],
        data: { nodeId, liveLeases: last.value.liveLeases },
      },
    )
  }
  return { ...result, ...last.value, waitedSeconds: Math.round((options.clock.now().getTime() - started) / 1000) }
}

/**
 * `fleetkit node undrain NODE`: a draining node back to `active`, not schedulable. Its agent may
 * lease again (a `node check` runs), and `node admit` then makes it schedulable with its usual
 * guards (fresh heartbeat, passing checks, capacity): undrain never schedules on its own.
 * A lost node that heartbeated since it was lost comes back the same way: admit refuses it while its
 * latest checks failed, and a lost node leases no checks job, so without this it could never prove itself fixed.
 */
export async function undrainNode(options: {
  pool: StatePool
  nodeId: string
  actor: string
}): Promise<TransitionResult> {
  const { nodeId } = options
  return withLockedNode(options.pool, nodeId, async (client, node) => {
    // Active already: a retried undrain (or one that raced another) finds it done.
    if (node.status === 'active')
      return transition(node, 'undrain', node, `${nodeId}: not draining (active); nothing changed`)
    const returning = isReturningLost(node)
    if (node.status !== 'draining' && !returning) {
      const next =
        node.status === 'parked'
          ? `fleetkit node unpark ${nodeId}`
          : node.status === 'lost'
            ? `fleetkit-agent doctor (on ${nodeId}); once it heartbeats again, fleetkit node undrain ${nodeId} or fleetkit node admit ${nodeId}`
            : undefined
      throw stateConflict(
        node,
        'undrain',
        ['draining', 'lost (heard from since it was lost)', 'active (nothing to do)'],
        next,
      )
    }
    const after = await writeNodeLifecycle(client, nodeId, {
      status: 'active',
      schedulable: false,
      clearLost: returning,
    })
    await appendEvent(client, { kind: 'node_undrained', nodeId, data: { from: node.status, actor: options.actor } })
    return transition(
      node,
      'undrain',
      after,
      `${nodeId}: active again (was ${node.status}): it may lease jobs, so fleetkit node check ${nodeId} runs; not schedulable until fleetkit node admit ${nodeId}`,
    )
  })
}
