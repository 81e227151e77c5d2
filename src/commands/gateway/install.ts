// `fleetkit gateway install`: the gateway as a systemd service on the state every CLI of this
// machine uses (src/gateway/install/).
import { Flags } from '@oclif/core'

import { envWithStateDir, stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { GatewayInstallResult } from '../../gateway/install/install.js'

export default class GatewayInstall extends FleetkitCommand<GatewayInstallResult> {
  static override summary = 'Install the gateway as a systemd service on the state this CLI uses (root only).'
  static override description = `Creates the system account and group fleetkit-gateway (useradd --system), gives it the
state directory (as root: /var/lib/fleetkit; a root-owned state is taken over), shares that with the group
(setgid directories: members of the group use the same database from the CLI), writes
/etc/systemd/system/fleetkit-gateway.service from systemd/fleetkit-gateway.service with ExecStart naming this
fleetkit, enables and starts it, waits for its database and records a gateway_installed event. A second run
changes nothing and says so. Refuses when not root (GATEWAY_INSTALL_NOT_ROOT) and when the state's
embedded PostgreSQL runs as another account (GATEWAY_INSTALL_SERVER_RUNNING: fleetkit db stop first).
With --with-reconcile it also writes /etc/systemd/system/fleetkit-reconcile.service from
systemd/fleetkit-reconcile.service (fleetkit reconcile as the same account on the same state, after the
gateway; settings in /etc/fleetkit/reconcile.env), enables and starts it. When the state has an off-host
archive remote (fleetkit db archive remote add), it also writes fleetkit-archive-ship.service and .timer from
systemd/ (fleetkit db archive ship as the same account, every minute) and enables the timer; a remote added
later needs this command again. gateway uninstall removes them all.`
  static override examples = [
    'sudo <%= config.bin %> <%= command.id %>',
    'sudo <%= config.bin %> <%= command.id %> --json',
    'sudo <%= config.bin %> <%= command.id %> --with-reconcile',
  ]
  static override flags = {
    'state-dir': stateDirFlag("The state directory the service runs on (default: root's, /var/lib/fleetkit)."),
    'with-reconcile': Flags.boolean({
      summary: 'Also install, enable and start fleetkit-reconcile.service beside the gateway (docs/operations.md).',
    }),
  }

  async run(): Promise<GatewayInstallResult> {
    const { flags } = await this.parse(GatewayInstall)
    const { installGatewayService } = await import('../../gateway/install/gateway-service.js')
    const result = await this.withDeferredState({ stateDir: flags['state-dir'] }, ({ withPool, progress }) =>
      installGatewayService({
        env: envWithStateDir(flags['state-dir']),
        withPool: (work) => withPool((pool) => work(pool)),
        lock: { onWait: progress },
        withReconcile: flags['with-reconcile'],
      }),
    )
    if (!result.changed)
      this.log(`The gateway service is installed as it should be: nothing changed (${result.unitPath}).`)
    for (const line of result.actions) this.log(`  ${line}`)
    this.log(`The gateway runs as ${result.account} on ${result.stateDir}: ExecStart=${result.execStart}`)
    if (result.reconcileUnitPath) this.log(`fleetkit reconcile runs beside it: ${result.reconcileUnitPath}`)
    if (result.archiveShipTimerPath)
      this.log(`fleetkit db archive ship runs every minute: ${result.archiveShipTimerPath}`)
    this.log(`Next: ${result.next}`)
    return result
  }
}
