// `fleetkit ca operator-list [--name NAME]`: the operator certificates issued, live, expired or revoked.
import { Flags } from '@oclif/core'

import { stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { OperatorListResult } from '../../lifecycle/ca/operator-revoke.js'

export default class CaOperatorList extends FleetkitCommand<OperatorListResult> {
  static override summary = 'List operator client certificates: name, serial, expiry, live, expired or revoked.'
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --name alice --json',
  ]
  static override flags = {
    name: Flags.string({ summary: "Only this operator's certificates." }),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<OperatorListResult> {
    const { flags } = await this.parse(CaOperatorList)
    const { listOperators } = await import('../../lifecycle/ca/operator-revoke.js')
    const r = await this.withState({ stateDir: flags['state-dir'] }, ({ pool, clock }) =>
      listOperators({ pool, ...(flags.name === undefined ? {} : { name: flags.name }), now: clock.now() }),
    )
    if (r.certificates.length === 0) this.log('No operator certificates.')
    for (const c of r.certificates)
      this.log(
        `${c.name}  ${c.serial}  ${c.status}  until ${c.notAfter}${c.revokedAt ? `  revoked ${c.revokedAt}` : ''}`,
      )
    return r
  }
}
