// `fleetkit node undrain NODE`: a draining node back in service, active but not schedulable
// until `node admit` (src/lifecycle/node/node-drain.ts).
import { Args } from '@oclif/core'

import { stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { TransitionResult } from '../../lifecycle/node/node-transition.js'

export default class NodeUndrain extends FleetkitCommand<TransitionResult> {
  static override summary =
    'Take a draining node back: active again, so it leases jobs and node check runs; node admit makes it schedulable.'
  static override description = `The way back from node drain. The node becomes active and not schedulable: its agent leases jobs
again (node check runs on it), while no reservation lands until node admit, which applies its own
guards (a heartbeat within 60 s, passing checks, a capacity). Applies to draining nodes; an active one
is left as it is (changed false). Any other status is NODE_STATE_CONFLICT naming it: a parked node
comes back with node unpark, a lost one with node admit once it heartbeats.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> build-01',
    '<%= config.bin %> <%= command.id %> build-01 --json',
  ]
  static override args = { node: Args.string({ description: 'node id', required: true }) }
  static override flags = { 'state-dir': stateDirFlag() }

  async run(): Promise<TransitionResult> {
    const { args, flags } = await this.parse(NodeUndrain)
    const { undrainNode } = await import('../../lifecycle/node/node-drain.js')
    const result = await this.withState({ stateDir: flags['state-dir'] }, ({ pool, actor }) =>
      undrainNode({ pool, nodeId: args.node, actor }),
    )
    this.log(result.message)
    return result
  }
}
