// `fleetkit db archive base-backup`: a base backup of the running embedded server into the archive
// directory (src/lifecycle/state/db-archive.ts); schedule it, a restore to a time starts from the last one before it.
import { stateDirFlag } from '../../../cli/flags.js'
import { FleetkitCommand } from '../../../cli/fleetkit-command.js'
import type { BaseBackupManifest } from '../../../store/embedded/base-backup.js'

export default class DbArchiveBaseBackup extends FleetkitCommand<BaseBackupManifest> {
  static override summary = 'Take a base backup of the embedded server into its WAL archive directory.'
  static override description = `PostgreSQL's own non-exclusive backup (pg_backup_start, a copy of the data directory,
pg_backup_stop) while gateways keep running, as DIR/base/base-<time>.tar.gz with a manifest beside it
(its SHA-256, and the time from which it can be restored). It ends once the WAL it needs is archived.
A restore to a time replays WAL from the last base backup before that time, so a daily one keeps
restores short.`
  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> --json']
  static override flags = {
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<BaseBackupManifest> {
    const { flags } = await this.parse(DbArchiveBaseBackup)
    const { takeArchiveBaseBackup } = await import('../../../lifecycle/state/db-archive.js')
    const r = await this.withState({ stateDir: flags['state-dir'], embedded: 'restarts' }, (context) =>
      takeArchiveBaseBackup({ ...context, env: process.env, now: () => context.clock.now() }),
    )
    this.log(`Base backup ${r.label}: ${r.file}, ${r.bytes} bytes, ${r.files} files, restorable from ${r.stoppedAt}`)
    return r
  }
}
