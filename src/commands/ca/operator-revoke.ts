// `fleetkit ca operator-revoke NAME [--serial S]`: end an operator certificate's access to the
// operator API (src/lifecycle/ca/operator-revoke.ts).
import { Args, Flags } from '@oclif/core'

import { stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { OperatorRevokeResult } from '../../lifecycle/ca/operator-revoke.js'

export default class CaOperatorRevoke extends FleetkitCommand<OperatorRevokeResult> {
  static override summary =
    "Revoke an operator's client certificates: the operator API refuses them from the next request."
  static override description = `Revokes every live certificate issued to NAME by \`fleetkit ca operator-cert\`, or only
the one of --serial, and records an operator_certificate_revoked event per certificate. Gateways
look each operator request's certificate up in the state, so the next request is refused (403
operator_refused). OPERATOR_CERT_UNKNOWN when NAME has no live certificate (nothing changed).`
  static override examples = [
    '<%= config.bin %> <%= command.id %> alice',
    '<%= config.bin %> <%= command.id %> ci-scheduler --serial 5f0c2a9e41d7 --json',
  ]
  static override args = { name: Args.string({ description: 'operator name', required: true }) }
  static override flags = {
    serial: Flags.string({ summary: 'Revoke only the certificate with this serial (see ca operator-list).' }),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<OperatorRevokeResult> {
    const { args, flags } = await this.parse(CaOperatorRevoke)
    const { revokeOperatorCertificate } = await import('../../lifecycle/ca/operator-revoke.js')
    const r = await this.withState({ stateDir: flags['state-dir'] }, ({ pool, actor, clock }) =>
      revokeOperatorCertificate({
        pool,
        name: args.name,
        ...(flags.serial === undefined ? {} : { serial: flags.serial }),
        actor,
        now: clock.now(),
      }),
    )
    for (const c of r.revoked)
      this.log(`Revoked operator certificate ${c.serial} of ${c.name} (valid until ${c.notAfter})`)
    return r
  }
}
