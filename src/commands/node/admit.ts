// `fleetkit node admit NODE`: make an active, recently heard-from node with capacity schedulable
// (src/lifecycle/node/node-admit.ts); --definition records its capacity from fleet.yaml first.
import { Flags } from '@oclif/core'

import { transitionCommand } from '../../cli/transition-command.js'
import type { TransitionResult } from '../../lifecycle/node/node-transition.js'

const ownFlags = {
  definition: Flags.string({
    char: 'd',
    summary: "Record the node's capacity from this fleet definition before admitting it.",
    helpValue: 'PATH',
  }),
}

export default transitionCommand<TransitionResult, typeof ownFlags>({
  summary:
    'Make a node schedulable: only if it is active, heartbeated within 60 s, passing its checks, and with capacity.',
  description: `Refusals name the condition that failed: NODE_STATE_CONFLICT (not active), NODE_SILENT (no
heartbeat within 60 s, database clock), NODE_CHECKS_FAILING (its latest host checks failed),
NODE_CAPACITY_UNKNOWN (no capacity recorded; --definition records the node's maxCapacity, or its
server type less the host reserve). A lost node that is heartbeating again can be admitted back. A
draining node is taken back with node undrain first (active again, its checks can run), then admitted.`,
  examples: [
    '<%= config.bin %> <%= command.id %> build-01',
    '<%= config.bin %> <%= command.id %> build-01 --definition fleet.yaml --json',
  ],
  flags: ownFlags,
  load: async (flags, nodeId) => {
    const { admitNode } = await import('../../lifecycle/node/node-admit.js')
    const { capacityFromDefinition } = await import('../../lifecycle/node/node-capacity.js')
    // Read before the state opens: a definition that does not load fails at once.
    const capacity = flags.definition ? await capacityFromDefinition(flags.definition, nodeId) : undefined
    return (input) => admitNode({ ...input, ...(capacity ? { capacity } : {}) })
  },
})
