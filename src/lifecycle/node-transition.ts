// What every lifecycle command shares: the node locked in a transaction, a coded refusal for
// an unknown node or a status the command does not apply to, and the result every command prints.
import type pg from 'pg'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { withTransaction } from '../store/database.js'
import { lockNode } from '../store/node-lifecycle.js'
import type { NodeRow, NodeStatus } from '../store/nodes.js'

export type LockedNode = NonNullable<Awaited<ReturnType<typeof lockNode>>>

export interface TransitionResult {
  /** @minLength 1 */
  nodeId: string
  action: 'admit' | 'drain' | 'decommission' | 'park' | 'unpark'
  /** False when the node already was where the command takes it: nothing was written. */
  changed: boolean
  from: NodeStatus
  to: NodeStatus
  schedulable: boolean
  /**
   * One line for a person: what changed.
   * @minLength 1
   */
  message: string
}

/** Run `fn` with the node row locked FOR UPDATE; NODE_UNKNOWN when there is no such node. */
export async function withLockedNode<T>(
  pool: pg.Pool,
  nodeId: string,
  fn: (client: pg.PoolClient, node: LockedNode) => Promise<T>,
): Promise<T> {
  return withTransaction(pool, async (client) => {
    const node = await lockNode(client, nodeId)
    if (!node) throw unknownNode(nodeId)
    return fn(client, node)
  })
}

export function unknownNode(nodeId: string): FleetkitError {
  return new FleetkitError('NODE_UNKNOWN', `no node ${JSON.stringify(nodeId.slice(0, 64))} in the state database`, {
    actions: ['fleetkit node list'],
  })
}

export function stateConflict(node: NodeRow, action: string, allowed: readonly string[], next?: string): FleetkitError {
  return new FleetkitError(
    'NODE_STATE_CONFLICT',
    `cannot ${action} ${node.id}: it is ${node.status} (${action} applies to ${allowed.join(', ')})`,
    {
      actions: [`fleetkit node show ${node.id}`, ...(next ? [next] : [])],
      data: { nodeId: node.id, status: node.status, allowed },
    },
  )
}

export function transition(
  node: NodeRow,
  action: TransitionResult['action'],
  to: NodeRow,
  message: string,
): TransitionResult {
  return {
    nodeId: node.id,
    action,
    changed: node.status !== to.status || node.schedulable !== to.schedulable,
    from: node.status,
    to: to.status,
    schedulable: to.schedulable,
    message,
  }
}
