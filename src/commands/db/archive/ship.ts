// `fleetkit db archive ship`: every finished file of the local WAL archive not yet on the off-host archive
// goes there, checked by SHA-256 (src/lifecycle/state/archive-ship.ts).
import { gatewayEnvFlag, stateDirFlag } from '../../../cli/flags.js'
import { FleetkitCommand } from '../../../cli/fleetkit-command.js'
import { resolveStateDir } from '../../../config/state-dir.js'
import type { ShipResult } from '../../../lifecycle/state/archive-ship.js'

export default class DbArchiveShip extends FleetkitCommand<ShipResult> {
  static override summary = 'Send the finished WAL segments and base backups not yet shipped to the off-host archive.'
  static override description = `Lists what the remote holds with its checksum file, then sends every other finished
file of the local archive (segments in order, then each base backup's tar and manifest): to NAME.part,
fsynced, read back and compared by SHA-256 with the local file, renamed into place, then NAME.sha256
beside it; then the kit a new control host needs (the embedded server's password, the PKI directory,
the published releases, the gateway unit's environment file), each file when its checksum changed.
Idempotent and resumable: a run killed midway is completed by the next. PostgreSQL's own
archiving stays local, so a remote that is down never holds the server up: the run fails
(ARCHIVE_REMOTE_UNREACHABLE), and the next one sends the backlog. Run it from a timer every minute;
fleetkit db status shows the last shipped segment and the last failure.`
  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> --json']
  static override flags = {
    'gateway-env': gatewayEnvFlag(
      "The gateway unit's environment file, shipped in the kit when readable and not naming DATABASE_URL.",
    ),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<ShipResult> {
    const { flags } = await this.parse(DbArchiveShip)
    const { shipArchive } = await import('../../../lifecycle/state/archive-ship.js')
    const { openSftpArchive } = await import('../../../sync/sftp-archive.js')
    const stateDir = flags['state-dir']?.trim() ? flags['state-dir'] : resolveStateDir(process.env)
    const r = await this.withOperator({}, ({ clock, progress }) =>
      shipArchive({
        stateDir,
        env: process.env,
        gatewayEnvFile: flags['gateway-env'],
        now: () => clock.now(),
        openRemote: (remote) => openSftpArchive(remote, process.env),
        progress,
      }),
    )
    this.log(
      r.shipped.length > 0
        ? `Shipped ${r.shipped.length} file(s), ${r.bytes} bytes, to ${r.url}; newest segment there: ${r.lastShippedWal ?? 'none'}`
        : `Nothing to ship: ${r.url} holds every finished file (newest segment ${r.lastShippedWal ?? 'none'})`,
    )
    return r
  }
}
