// `fleetkit alloc reserve`: reserve capacity on a schedulable node (src/lifecycle/node/allocations.ts).
import { Flags } from '@oclif/core'

import { stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import { hasControlCharacters, shownOnTerminal } from '../../protocol/terminal-text.js'
import type { AllocationView } from '../../lifecycle/node/allocations.js'

export default class AllocReserve extends FleetkitCommand<AllocationView> {
  static override summary = 'Reserve capacity on a node for an owner (a CI scheduler, an application platform).'
  static override description = `Refused with NODE_NOT_SCHEDULABLE unless the node is active and admitted, and with
ALLOCATION_OVER_CAPACITY when the node's capacity less its active allocations cannot take it.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> --node build-01 --cpu 2 --memory 4096 --disk 20 --owner ci',
  ]
  static override flags = {
    node: Flags.string({ summary: 'The node to reserve on.', required: true }),
    owner: Flags.string({ summary: 'Who holds the reservation.', required: true }),
    cpu: Flags.string({ summary: 'vCPUs (fractions allowed, e.g. 0.5).', default: '0' }),
    memory: Flags.integer({ summary: 'Memory in MiB.', default: 0, min: 0, max: 1_000_000 }),
    disk: Flags.integer({ summary: 'Disk in GiB.', default: 0, min: 0, max: 1_000_000 }),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<AllocationView> {
    const { flags } = await this.parse(AllocReserve)
    const { reserve, formatAllocation } = await import('../../lifecycle/node/allocations.js')
    const { FleetkitError } = await import('../../checks/fleetkit-error.js')
    const cpu = Number(flags.cpu)
    if (!/^\d{1,6}(\.\d{1,2})?$/.test(flags.cpu) || !Number.isFinite(cpu))
      throw new FleetkitError(
        'USAGE_INVALID',
        `--cpu ${JSON.stringify(flags.cpu.slice(0, 20))} is not a number of vCPUs like 2 or 0.5`,
        { actions: ['fleetkit help alloc reserve'] },
      )
    // Stored, then printed by `alloc list` and `node show`: no control character, nor a mark that reorders or
    // hides the rest of the row (U+202E), as the gateway's allocation route refuses.
    if (flags.owner.length > 256 || hasControlCharacters(flags.owner))
      throw new FleetkitError(
        'USAGE_INVALID',
        '--owner is 1 to 256 printable characters, with no control character or bidi or zero-width mark',
        {
          actions: ['fleetkit help alloc reserve'],
        },
      )
    const a = await this.withState({ stateDir: flags['state-dir'] }, ({ pool, actor }) =>
      reserve(pool, {
        nodeId: flags.node,
        owner: flags.owner,
        cpu,
        memoryMib: flags.memory,
        diskGib: flags.disk,
        actor,
      }),
    )
    this.log(
      `Reserved ${a.id} on ${a.nodeId} for ${shownOnTerminal(a.owner)}: cpu ${a.cpu}, memory ${a.memoryMib} MiB, disk ${a.diskGib} GiB`,
    )
    this.log(formatAllocation(a))
    return a
  }
}
