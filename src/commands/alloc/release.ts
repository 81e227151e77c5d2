// `fleetkit alloc release ID`: release one active allocation; `--stranded NODE|ID`: a person's decision
// to give up what a stateful pool's lost node held (src/lifecycle/node/allocations.ts).
import { Args, Flags } from '@oclif/core'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { stateDirFlag, yesFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { AllocReleaseResult } from '../../lifecycle/node/allocations.js'

export default class AllocRelease extends FleetkitCommand<AllocReleaseResult> {
  static override summary =
    'Release an allocation: its capacity is free again (ALLOCATION_UNKNOWN if there is no active one of that id).'
  static override description = `With --stranded NODE (or an allocation id): release the allocations stranded on a lost node of a
stateful pool (fleet.yaml's stateful: true), the decision the sweep leaves to a person. Their capacity is given up
and whatever state they held is abandoned: on a terminal it asks first (y/N); without one, or with --json, it needs
--yes (CONFIRMATION_REQUIRED otherwise). Each release is an allocation_released event with the actor. The other
way out is the node itself: once it heartbeats again, the sweep makes its stranded allocations active again.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> 0b6f3c1e-5d2a-4c39-9a61-1f0e4b7c2d88',
    '<%= config.bin %> <%= command.id %> --stranded db-1 --yes',
  ]
  static override args = { id: Args.string({ description: 'allocation id (an active one)', required: false }) }
  static override flags = {
    stranded: Flags.string({
      summary: 'Release the stranded allocations of this lost node (or this one stranded allocation id).',
      helpValue: 'NODE|ID',
    }),
    yes: yesFlag('Release stranded allocations without asking; needed without a terminal and with --json.'),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<AllocReleaseResult> {
    const { args, flags } = await this.parse(AllocRelease)
    if ((args.id === undefined) === (flags.stranded === undefined))
      throw new FleetkitError(
        'USAGE_INVALID',
        'name an allocation id, or --stranded NODE|ID, not both and not neither',
        {
          actions: ['fleetkit alloc release ID', 'fleetkit alloc release --stranded NODE --yes'],
        },
      )
    const { release, releaseStranded, formatReleased } = await import('../../lifecycle/node/allocations.js')
    const stranded = flags.stranded
    const result = await this.withState(
      { stateDir: flags['state-dir'] },
      ({ pool, actor }): Promise<AllocReleaseResult> =>
        stranded === undefined
          ? release(pool, args.id!, actor)
          : releaseStranded({ pool, target: stranded, actor, confirm: this.confirmation(flags.yes) }),
    )
    this.log(formatReleased(result))
    return result
  }
}
