// `fleetkit node drain NODE [--wait S]`: no new leases or reservations; jobs it holds finish
// (src/lifecycle/node/node-drain.ts).
import { Args, Flags } from '@oclif/core'

import { stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { DrainResult } from '../../lifecycle/node/node-drain.js'

export default class NodeDrain extends FleetkitCommand<DrainResult> {
  static override summary =
    'Drain a node: not schedulable, leases refused (403), while completions of jobs it holds still land.'
  static override description = `Reports the node's active allocations and live leases. With --wait, waits until no lease on
it is live (NODE_WAIT_TIMEOUT after that many seconds). Applies to active, unhealthy and draining nodes.
node undrain takes it back (active, not schedulable), node admit then schedules it again.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> build-01',
    '<%= config.bin %> <%= command.id %> build-01 --wait 600 --json',
  ]
  static override args = { node: Args.string({ description: 'node id', required: true }) }
  static override flags = {
    wait: Flags.integer({ summary: 'Seconds to wait for its live leases to end.', min: 1, max: 86400 }),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<DrainResult> {
    const { args, flags } = await this.parse(NodeDrain)
    const { drainNode } = await import('../../lifecycle/node/node-drain.js')
    const result = await this.withState(
      { stateDir: flags['state-dir'], interruptible: true },
      ({ pool, actor, clock, signal }) =>
        drainNode({
          pool,
          nodeId: args.node,
          actor,
          clock,
          signal,
          ...(flags.wait === undefined ? {} : { waitSeconds: flags.wait }),
        }),
    )
    this.log(result.message)
    if (result.waitedSeconds !== undefined) this.log(`${result.nodeId}: no live leases after ${result.waitedSeconds} s`)
    return result
  }
}
