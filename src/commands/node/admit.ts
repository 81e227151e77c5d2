// `fleetkit node admit NODE`: make an active, recently heard-from node with capacity schedulable
// (src/lifecycle/node/node-admit.ts); --definition records its capacity from fleet.yaml first.
import { Args, Flags } from '@oclif/core'

import { stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { TransitionResult } from '../../lifecycle/node/node-transition.js'

export default class NodeAdmit extends FleetkitCommand<TransitionResult> {
  static override summary =
    'Make a node schedulable: only if it is active, heartbeated within 60 s, passing its checks, and with capacity.'
  static override description = `Refusals name the condition that failed: NODE_STATE_CONFLICT (not active), NODE_SILENT (no
heartbeat within 60 s, database clock), NODE_CHECKS_FAILING (its latest host checks failed),
NODE_CAPACITY_UNKNOWN (no capacity recorded; --definition records the node's maxCapacity, or its
server type less the host reserve). A lost node that is heartbeating again can be admitted back. A
draining node is taken back with node undrain first (active again, its checks can run), then admitted.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> build-01',
    '<%= config.bin %> <%= command.id %> build-01 --definition fleet.yaml --json',
  ]
  static override args = { node: Args.string({ description: 'node id', required: true }) }
  static override flags = {
    definition: Flags.string({
      char: 'd',
      summary: "Record the node's capacity from this fleet definition before admitting it.",
      helpValue: 'PATH',
    }),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<TransitionResult> {
    const { args, flags } = await this.parse(NodeAdmit)
    const { admitNode } = await import('../../lifecycle/node/node-admit.js')
    const { capacityFromDefinition } = await import('../../lifecycle/node/node-capacity.js')
    const capacity = flags.definition ? await capacityFromDefinition(flags.definition, args.node) : undefined
    const result = await this.withState({ stateDir: flags['state-dir'] }, ({ pool, actor }) =>
      admitNode({ pool, nodeId: args.node, actor, ...(capacity ? { capacity } : {}) }),
    )
    this.log(result.message)
    return result
  }
}
