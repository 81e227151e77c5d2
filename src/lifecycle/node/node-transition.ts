// What every lifecycle command shares: the node locked in a transaction, a coded refusal for
// an unknown node or a status the command does not apply to, and the result every command prints.
import type { StatePool, StateTransaction } from '../../store/transaction.js'

import type { FailureCode } from '../../checks/failure-codes.js'
import { FleetkitError } from '../../checks/fleetkit-error.js'
import { nearestNames } from '../../definition/did-you-mean.js'
import { type Queryable, withTransaction } from '../../store/database.js'
import { lockNode } from '../../store/nodes/node-lifecycle.js'
import { listNodeIds, type NodeRow, type NodeStatus } from '../../store/nodes/nodes.js'

export type LockedNode = NonNullable<Awaited<ReturnType<typeof lockNode>>>

export interface TransitionResult {
  /** @minLength 1 */
  nodeId: string
  action: 'admit' | 'drain' | 'undrain' | 'decommission' | 'park' | 'unpark'
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

/**
 * Asks before an irreversible step (the command passes src/cli/confirm.ts's); throws a coded error
 * when it is not confirmed. Called before anything is written; absent, nothing is asked (a library caller).
 */
export type Confirm = (request: {
  /** What is lost, naming the node. */
  what: string
  /** The command again with --yes. */
  command: string
  code?: FailureCode
  data?: Record<string, unknown>
}) => Promise<void>

/** Run `fn` with the node row locked FOR UPDATE; NODE_UNKNOWN when there is no such node. */
export async function withLockedNode<T>(
  pool: StatePool,
  nodeId: string,
  fn: (client: StateTransaction, node: LockedNode) => Promise<T>,
): Promise<T> {
  return withTransaction(pool, async (client) => {
    const node = await lockNode(client, nodeId)
    if (!node) throw await unknownNode(client, nodeId)
    return fn(client, node)
  })
}

/** NODE_UNKNOWN, with the known ids nearest to the one given ("did you mean"), on one line. */
export async function unknownNode(q: Queryable, nodeId: string): Promise<FleetkitError> {
  const shown = nodeId.slice(0, 64)
  const suggestions = nearestNames(shown, await listNodeIds(q))
  const didYouMean = suggestions.length === 0 ? '' : `; did you mean ${suggestions.map((s) => `"${s}"`).join(' or ')}?`
  return new FleetkitError('NODE_UNKNOWN', `no node ${JSON.stringify(shown)} in the state database${didYouMean}`, {
    actions: [...suggestions.map((s) => `fleetkit node show ${s}`), 'fleetkit node list'],
    data: { nodeId: shown, suggestions },
  })
}

/** A lost node whose agent has heartbeated since it was lost: admit (and undrain) may take it back. */
export function isReturningLost(node: Pick<NodeRow, 'status' | 'lastSeenAt' | 'lostAt'>): boolean {
  return node.status === 'lost' && node.lastSeenAt !== null && node.lostAt !== null && node.lastSeenAt > node.lostAt
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
