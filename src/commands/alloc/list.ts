// `fleetkit alloc list`: allocations, active by default (src/lifecycle/node/allocations.ts).
import { Flags } from '@oclif/core'

import { stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { AllocationView } from '../../lifecycle/node/allocations.js'

export interface AllocListResult {
  allocations: AllocationView[]
}

export default class AllocList extends FleetkitCommand<AllocListResult> {
  static override summary = 'List allocations (active ones unless --status released|stranded or --all).'
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --node build-01 --json',
  ]
  static override flags = {
    node: Flags.string({ summary: 'Only allocations on this node.' }),
    owner: Flags.string({ summary: 'Only allocations of this owner.' }),
    status: Flags.string({
      summary: 'Only allocations in this status.',
      options: ['active', 'released', 'stranded'],
      default: 'active',
    }),
    all: Flags.boolean({ summary: 'Active, stranded and released allocations.' }),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<AllocListResult> {
    const { flags } = await this.parse(AllocList)
    const { list, formatAllocation } = await import('../../lifecycle/node/allocations.js')
    const allocations = await this.withState({ stateDir: flags['state-dir'] }, ({ pool }) =>
      list(pool, {
        ...(flags.node ? { nodeId: flags.node } : {}),
        ...(flags.owner ? { owner: flags.owner } : {}),
        ...(flags.all ? {} : { status: flags.status as 'active' | 'released' | 'stranded' }),
      }),
    )
    if (allocations.length === 0) this.log('No allocations match.')
    for (const a of allocations) this.log(formatAllocation(a))
    return { allocations }
  }
}
