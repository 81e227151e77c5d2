// `fleetkit node hold NODE --reason TEXT` / `node release NODE`: mark a node hands-off for
// `fleetkit reconcile` (who, why, when) and take the mark away. A hold changes nothing on the host,
// nor the node's status or admission: it only tells reconcile to leave the node alone.
import type { StatePool } from '../../store/transaction.js'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { appendEvent } from '../../store/events.js'
import { deleteNodeHold, getNodeHold, insertNodeHold, type NodeHold } from '../../store/nodes/node-holds.js'
import { stateConflict, withLockedNode } from './node-transition.js'

export interface NodeHoldResult {
  /** @minLength 1 */
  nodeId: string
  action: 'hold' | 'release'
  /** False when the node already was held (hold) or not held (release): nothing was written. */
  changed: boolean
  /** The hold after the command: null once released. */
  hold: HoldView | null
  /**
   * One line for a person: what changed.
   * @minLength 1
   */
  message: string
}

interface HoldView {
  /** @minLength 1 */
  reason: string
  /** @minLength 1 */
  heldBy: string
  /** @format date-time */
  heldAt: string
}

const MAX_REASON = 500

function view(h: NodeHold): HoldView {
  return { reason: h.reason, heldBy: h.heldBy, heldAt: h.heldAt.toISOString() }
}

/** The reason as stored: trimmed, one line, 1 to 500 characters; USAGE_INVALID otherwise (nothing written). */
export function holdReason(given: string): string {
  const reason = given.trim()
  // eslint-disable-next-line no-control-regex -- control characters are what is refused here
  if (reason.length === 0 || reason.length > MAX_REASON || /[\u0000-\u001f\u007f]/.test(reason)) {
    throw new FleetkitError(
      'USAGE_INVALID',
      `--reason must be one line of 1 to ${MAX_REASON} characters saying why the node is held`,
      {
        actions: ['fleetkit node hold NODE --reason "disk replacement, ticket 4711"'],
        data: { length: reason.length },
      },
    )
  }
  return reason
}

export async function holdNode(options: {
  pool: StatePool
  nodeId: string
  actor: string
  reason: string
}): Promise<NodeHoldResult> {
  const { nodeId, actor } = options
  const reason = holdReason(options.reason)
  return withLockedNode(options.pool, nodeId, async (client, node) => {
    if (node.status === 'retired') throw stateConflict(node, 'hold', ['every status but retired'])
    const held = await getNodeHold(client, nodeId)
    if (held) {
      const same = held.reason === reason
      return {
        nodeId,
        action: 'hold',
        changed: false,
        hold: view(held),
        message: `${nodeId}: already held by ${held.heldBy} since ${held.heldAt.toISOString()} (${held.reason}); nothing changed${
          same ? '' : `: to change the reason, fleetkit node release ${nodeId}, then hold it again`
        }`,
      }
    }
    const hold = await insertNodeHold(client, { nodeId, reason, heldBy: actor })
    await appendEvent(client, { kind: 'node_held', nodeId, data: { reason, actor, status: node.status } })
    return {
      nodeId,
      action: 'hold',
      changed: true,
      hold: view(hold),
      message: `${nodeId}: held by ${actor} (${reason}): fleetkit reconcile leaves it alone until fleetkit node release ${nodeId}; nothing on the host changed`,
    }
  })
}

export async function releaseNode(options: {
  pool: StatePool
  nodeId: string
  actor: string
}): Promise<NodeHoldResult> {
  const { nodeId, actor } = options
  return withLockedNode(options.pool, nodeId, async (client) => {
    const released = await deleteNodeHold(client, nodeId)
    if (!released)
      return { nodeId, action: 'release', changed: false, hold: null, message: `${nodeId}: not held; nothing changed` }
    await appendEvent(client, {
      kind: 'node_released',
      nodeId,
      data: { actor, reason: released.reason, held_by: released.heldBy, held_at: released.heldAt.toISOString() },
    })
    return {
      nodeId,
      action: 'release',
      changed: true,
      hold: null,
      message: `${nodeId}: released by ${actor} (held by ${released.heldBy} since ${released.heldAt.toISOString()}: ${released.reason}); fleetkit reconcile may repair it again`,
    }
  })
}
