// `fleetkit gateway uninstall`: stop and remove the gateway's systemd service; the state and the
// account stay unless --remove-account (src/gateway/install/).
import { Flags } from '@oclif/core'

import { envWithStateDir, stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { GatewayUninstallResult } from '../../gateway/install/uninstall.js'

export default class GatewayUninstall extends FleetkitCommand<GatewayUninstallResult> {
  static override summary = 'Stop, disable and remove the gateway systemd service (root only); the state stays.'
  static override description = `Stops and disables fleetkit-gateway.service (its database server stops with it), removes
the unit file and records a gateway_uninstalled event. The state directory is never removed. The account
fleetkit-gateway keeps owning it unless --remove-account, which gives the state back to root (its data
directory to the postgres user, as root's own state has it) and removes the account and its group.`
  static override examples = [
    'sudo <%= config.bin %> <%= command.id %>',
    'sudo <%= config.bin %> <%= command.id %> --remove-account',
  ]
  static override flags = {
    'state-dir': stateDirFlag("The state directory the service ran on (default: root's, /var/lib/fleetkit)."),
    'remove-account': Flags.boolean({
      summary: 'Also give the state back to root and remove the fleetkit-gateway account and group.',
      default: false,
    }),
  }

  async run(): Promise<GatewayUninstallResult> {
    const { flags } = await this.parse(GatewayUninstall)
    const { uninstallGatewayServiceOnMachine } = await import('../../gateway/install/gateway-service.js')
    const result = await this.withDeferredState({ stateDir: flags['state-dir'] }, ({ withPool, progress }) =>
      uninstallGatewayServiceOnMachine({
        env: envWithStateDir(flags['state-dir']),
        withPool: (work) => withPool((pool) => work(pool)),
        lock: { onWait: progress },
        removeAccount: flags['remove-account'],
      }),
    )
    if (!result.changed) this.log('The gateway service is not installed: nothing changed.')
    for (const line of result.actions) this.log(`  ${line}`)
    this.log(
      result.accountRemoved
        ? `Kept the state in ${result.stateDir} (root's again).`
        : `Kept the state in ${result.stateDir} and the account ${result.account} that owns it (--remove-account removes it).`,
    )
    this.log(`Next: ${result.next}`)
    return result
  }
}
