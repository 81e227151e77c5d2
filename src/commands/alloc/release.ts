// `fleetkit alloc release ID`: release one active allocation (src/lifecycle/node/allocations.ts).
import { Args } from '@oclif/core'

import { stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { AllocationView } from '../../lifecycle/node/allocations.js'

export default class AllocRelease extends FleetkitCommand<AllocationView> {
  static override summary =
    'Release an allocation: its capacity is free again (ALLOCATION_UNKNOWN if there is no active one of that id).'
  static override examples = ['<%= config.bin %> <%= command.id %> 0b6f3c1e-5d2a-4c39-9a61-1f0e4b7c2d88']
  static override args = { id: Args.string({ description: 'allocation id', required: true }) }
  static override flags = { 'state-dir': stateDirFlag() }

  async run(): Promise<AllocationView> {
    const { args, flags } = await this.parse(AllocRelease)
    const { release } = await import('../../lifecycle/node/allocations.js')
    const a = await this.withState({ stateDir: flags['state-dir'] }, ({ pool, actor }) => release(pool, args.id, actor))
    this.log(`Released ${a.id} on ${a.nodeId} (owner ${a.owner})`)
    return a
  }
}
