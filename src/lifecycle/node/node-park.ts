// `fleetkit node park NODE` / `unpark NODE`: take a node out of sync, scheduling and lost
// detection without losing its identity (certificates stay), and bring it back where it was.
import type { StatePool } from '../../store/transaction.js'

import { hasAgentCertificate } from '../../store/pki/certificates.js'
import { appendEvent } from '../../store/events.js'
import { writeNodeLifecycle } from '../../store/nodes/node-lifecycle.js'
import type { NodeStatus } from '../../store/nodes/nodes.js'
import { stateConflict, transition, type TransitionResult, withLockedNode } from './node-transition.js'

const PARKABLE = ['provisioning', 'active', 'unhealthy', 'draining', 'lost', 'failed', 'parked'] as const

export async function parkNode(options: { pool: StatePool; nodeId: string; actor: string }): Promise<TransitionResult> {
  const { nodeId } = options
  return withLockedNode(options.pool, nodeId, async (client, node) => {
    if (!(PARKABLE as readonly string[]).includes(node.status)) throw stateConflict(node, 'park', PARKABLE)
    if (node.status === 'parked') return transition(node, 'park', node, `${nodeId}: already parked; nothing changed`)
    const after = await writeNodeLifecycle(client, nodeId, {
      status: 'parked',
      schedulable: false,
      parkedFrom: node.status,
    })
    await appendEvent(client, { kind: 'node_parked', nodeId, data: { from: node.status, actor: options.actor } })
    return transition(
      node,
      'park',
      after,
      `${nodeId}: parked (was ${node.status}): out of sync, scheduling and lost detection; its certificates are kept`,
    )
  })
}

export async function unparkNode(options: {
  pool: StatePool
  nodeId: string
  actor: string
}): Promise<TransitionResult> {
  const { nodeId } = options
  return withLockedNode(options.pool, nodeId, async (client, node) => {
    if (node.status !== 'parked') throw stateConflict(node, 'unpark', ['parked'])
    const from = node.parkedFrom
    // A node that never enrolled has no agent to come back: it needs a secret, not an unpark.
    const to: NodeStatus =
      from === 'unhealthy' ? 'active' : (from ?? ((await hasAgentCertificate(client, nodeId)) ? 'active' : 'parked'))
    if (to === 'parked')
      throw stateConflict(node, 'unpark', ['parked (enrolled at least once)'], `fleetkit node token ${nodeId}`)
    const after = await writeNodeLifecycle(client, nodeId, {
      status: to,
      schedulable: false,
      parkedFrom: null,
      unparked: true,
    })
    await appendEvent(client, { kind: 'node_unparked', nodeId, data: { to, actor: options.actor } })
    return transition(
      node,
      'unpark',
      after,
      `${nodeId}: unparked, now ${to}; silence is counted from now; not schedulable until ${
        to === 'draining'
          ? `fleetkit node undrain ${nodeId}, then fleetkit node admit ${nodeId}`
          : `fleetkit node admit ${nodeId}`
      }`,
    )
  })
}
