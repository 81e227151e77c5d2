// `fleetkit node unpark NODE` (src/lifecycle/node/node-park.ts).
import { Args } from '@oclif/core'

import { stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { TransitionResult } from '../../lifecycle/node/node-transition.js'

export default class NodeUnpark extends FleetkitCommand<TransitionResult> {
  static override summary =
    'Unpark a node: back to the status it was parked from, its silence counted from now; admit it to schedule again.'
  static override examples = [
    '<%= config.bin %> <%= command.id %> build-01',
    '<%= config.bin %> <%= command.id %> build-01 --json',
  ]
  static override args = { node: Args.string({ description: 'node id', required: true }) }
  static override flags = { 'state-dir': stateDirFlag() }

  async run(): Promise<TransitionResult> {
    const { args, flags } = await this.parse(NodeUnpark)
    const { unparkNode } = await import('../../lifecycle/node/node-park.js')
    const result = await this.withState({ stateDir: flags['state-dir'] }, ({ pool, actor }) =>
      unparkNode({ pool, nodeId: args.node, actor }),
    )
    this.log(result.message)
    return result
  }
}
