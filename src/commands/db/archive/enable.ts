// `fleetkit db archive enable DIR`: the embedded server archives every finished WAL segment into DIR
// and a first base backup is taken there (src/lifecycle/state/db-archive.ts).
import { Args, Flags } from '@oclif/core'

import { stateDirFlag } from '../../../cli/flags.js'
import { FleetkitCommand } from '../../../cli/fleetkit-command.js'
import type { ArchiveEnableResult } from '../../../lifecycle/state/db-archive.js'

export default class DbArchiveEnable extends FleetkitCommand<ArchiveEnableResult> {
  static override summary = 'Archive the embedded server WAL into a directory and take a first base backup there.'
  static override description = `Sets PostgreSQL's archive_mode and archive_command (in the data directory, so every start
keeps them), restarts the embedded server (running gateways answer 503 for a moment and carry on),
switches a WAL segment out and waits until it is in DIR/wal: if it does not arrive, the settings are put
back and the server restarted as it was. Then a base backup goes to DIR/base. DIR may be a mounted bucket.
With these, fleetkit db restore --to TIME brings the database back to any moment after a base backup.
Take a base backup regularly (fleetkit db archive base-backup): a restore replays the WAL from the last
one before the time asked for. Running it again with the same settings only takes a base backup.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> /var/backups/fleetkit-wal',
    '<%= config.bin %> <%= command.id %> /mnt/bucket/fleetkit --archive-timeout 60 --json',
  ]
  static override args = {
    dir: Args.string({ description: 'the archive directory (absolute; created if missing)', required: true }),
  }
  static override flags = {
    'archive-timeout': Flags.integer({
      summary:
        'Seconds after which a server with new WAL switches segments anyway: at most this much is lost with the machine.',
      default: 300,
      min: 30,
      max: 86_400,
    }),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<ArchiveEnableResult> {
    const { args, flags } = await this.parse(DbArchiveEnable)
    const { enableArchiving } = await import('../../../lifecycle/state/db-archive.js')
    const r = await this.withState({ stateDir: flags['state-dir'], embedded: 'restarts' }, (context) =>
      enableArchiving({
        ...context,
        env: process.env,
        now: () => context.clock.now(),
        dir: args.dir,
        archiveTimeoutSeconds: flags['archive-timeout'],
      }),
    )
    this.log(
      r.changed
        ? `Archiving WAL into ${r.dir}/wal (proved with segment ${r.provedWith}; a switch at least every ${r.archiveTimeoutSeconds} s with new WAL)`
        : `Archiving into ${r.dir} already: nothing changed`,
    )
    this.log(
      `Base backup ${r.baseBackup.label}: ${r.baseBackup.bytes} bytes, restorable from ${r.baseBackup.stoppedAt}`,
    )
    this.log('Next: schedule fleetkit db archive base-backup (daily); fleetkit db status shows the archive.')
    return r
  }
}
