// `fleetkit node park NODE` (src/lifecycle/node/node-park.ts).
import { Args } from '@oclif/core'

import { stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import { withDatabase } from '../../cli/with-database.js'
import type { TransitionResult } from '../../lifecycle/node/node-transition.js'

export default class NodePark extends FleetkitCommand<TransitionResult> {
  static override summary =
    'Park a node: out of sync, scheduling and lost detection, keeping its identity (certificates).'
  static override examples = [
    '<%= config.bin %> <%= command.id %> build-01',
    '<%= config.bin %> <%= command.id %> build-01 --json',
  ]
  static override args = { node: Args.string({ description: 'node id', required: true }) }
  static override flags = { 'state-dir': stateDirFlag() }

  async run(): Promise<TransitionResult> {
    const { args, flags } = await this.parse(NodePark)
    const { parkNode } = await import('../../lifecycle/node/node-park.js')
    const { actorOf } = await import('../../cli/actor.js')
    const result = await this.withProgress((progress) =>
      withDatabase(flags['state-dir'], progress, (pool) =>
        parkNode({ pool, nodeId: args.node, actor: actorOf(process.env) }),
      ),
    )
    this.log(result.message)
    return result
  }
}
