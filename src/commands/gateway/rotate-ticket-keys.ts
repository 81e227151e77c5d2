// `fleetkit gateway rotate-ticket-keys`: new TLS session ticket keys in the PKI directory
// (src/gateway/tls/ticket-keys.ts); running gateways take them up at their next PKI reload.
import { pkiDirFlag, pkiDirOf, stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { TicketKeyRotation } from '../../gateway/tls/ticket-keys.js'

export default class GatewayRotateTicketKeys extends FleetkitCommand<TicketKeyRotation> {
  static override summary = 'Replace the TLS session ticket keys every gateway sharing the PKI directory uses.'
  static override description = `Writes new random keys to tls-ticket-keys in the PKI directory (0600, renamed into
place). Each running gateway reads the file again within 2 s (as it re-reads its PKI directory) and issues and
accepts tickets under the new keys only: a session recorded under the old keys can no
longer be resumed (forward secrecy for resumed sessions), so each agent's next new connection is one full
handshake. Open connections are not touched. Run it on a schedule (daily, say) rather than all at once after
a restart; gateways on other machines need the same file.`
  static override examples = ['<%= config.bin %> <%= command.id %>']
  static override flags = {
    'pki-dir': pkiDirFlag(),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<TicketKeyRotation> {
    const { flags } = await this.parse(GatewayRotateTicketKeys)
    const { rotateTicketKeys } = await import('../../gateway/tls/ticket-keys.js')
    const rotation = await rotateTicketKeys(pkiDirOf(flags))
    this.log(`New TLS session ticket keys in ${rotation.path} (key name ${rotation.keyName})`)
    this.log('Running gateways take them up at their next PKI reload (ticket_keys_replaced in their log).')
    return rotation
  }
}
