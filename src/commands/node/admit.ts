// `fleetkit node admit NODE`: make an active, recently heard-from node with capacity schedulable
// (src/lifecycle/node/node-admit.ts); --definition records its capacity from fleet.yaml first.
import { Flags } from '@oclif/core'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { transitionCommand } from '../../cli/transition-command.js'
import type { TransitionResult } from '../../lifecycle/node/node-transition.js'

const ownFlags = {
  definition: Flags.string({
    char: 'd',
    summary: "Record the node's capacity from this fleet definition before admitting it.",
    helpValue: 'PATH',
  }),
  'accept-warn': Flags.string({
    summary: 'Admit although this check warned in its latest checks (a check ID, repeatable); recorded in the event.',
    helpValue: 'CHECK_ID',
    multiple: true,
  }),
}

export default transitionCommand<TransitionResult, typeof ownFlags>({
  summary:
    'Make a node schedulable: only if it is active, heartbeated within 60 s, passing its checks, and with capacity.',
  description: `Refusals name the condition that failed: NODE_STATE_CONFLICT (not active), NODE_SILENT (no
heartbeat within 60 s, database clock), NODE_CHECKS_FAILING (its latest host checks failed),
NODE_CHECKS_WARNING (a check warned and was not accepted by name: --accept-warn host:data-volume, repeatable,
recorded in the node_admitted event as accepted_warnings), NODE_CAPACITY_UNKNOWN (no capacity recorded; --definition records the node's maxCapacity, or its
server type less the host reserve). A lost node that is heartbeating again can be admitted back. A
draining node is taken back with node undrain first (active again, its checks can run), then admitted.`,
  examples: [
    '<%= config.bin %> <%= command.id %> build-01',
    '<%= config.bin %> <%= command.id %> build-01 --definition fleet.yaml --json',
    '<%= config.bin %> <%= command.id %> db-01 --accept-warn host:data-volume',
  ],
  flags: ownFlags,
  load: async (flags, nodeId) => {
    const acceptWarn = flags['accept-warn'] ?? []
    const { CHECK_ID_PATTERN } = await import('../../checks/check-id-pattern.js')
    const bad = acceptWarn.find((id) => !CHECK_ID_PATTERN.test(id))
    if (bad !== undefined)
      throw new FleetkitError(
        'USAGE_INVALID',
        `--accept-warn takes a check ID like host:data-volume, not ${JSON.stringify(bad.slice(0, 64))}`,
        {
          actions: ['fleetkit checks', `fleetkit node check ${nodeId}`],
        },
      )
    const { admitNode } = await import('../../lifecycle/node/node-admit.js')
    const { capacityFromDefinition } = await import('../../lifecycle/node/node-capacity.js')
    // Read before the state opens: a definition that does not load fails at once.
    const capacity = flags.definition ? await capacityFromDefinition(flags.definition, nodeId) : undefined
    return (input) => admitNode({ ...input, acceptWarn, ...(capacity ? { capacity } : {}) })
  },
})
