// `fleetkit db archive prune --keep N`: the archive keeps its newest N whole base backups and the WAL
// they need (src/store/embedded/archive-prune.ts).
import { Flags } from '@oclif/core'

import { stateDirFlag } from '../../../cli/flags.js'
import { FleetkitCommand } from '../../../cli/fleetkit-command.js'
import { resolveStateDir } from '../../../config/state-dir.js'
import type { ArchivePruneResult } from '../../../store/embedded/archive-prune.js'

export default class DbArchivePrune extends FleetkitCommand<ArchivePruneResult> {
  static override summary = 'Remove the base backups older than the newest N whole ones, and the WAL only they needed.'
  static override description = `Reads each base backup's SHA-256 from the newest back until --keep whole ones are found
(a damaged one is reported and not counted), removes every older base backup (its manifest first), then
every WAL segment of DIR/wal positioned before the oldest kept backup's start: no restore can use it.
Timeline history files stay. A restore to a time before the oldest kept backup is no longer possible.
Needs only the files, not the server; waits for a restore to a time that is reading the archive
(ARCHIVE_BUSY after 5 s). Schedule it after the daily base backup.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> --keep 7 --dry-run',
    '<%= config.bin %> <%= command.id %> --keep 7 --json',
  ]
  static override flags = {
    keep: Flags.integer({
      summary: 'How many whole base backups to keep, the newest ones.',
      required: true,
      min: 1,
      max: 10_000,
    }),
    'dry-run': Flags.boolean({ summary: 'Say what would be removed; remove nothing.', default: false }),
    archive: Flags.string({
      summary: 'The archive directory, when the state directory does not record it (archiving disabled since).',
    }),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<ArchivePruneResult> {
    const { flags } = await this.parse(DbArchivePrune)
    const { pruneArchiveOf } = await import('../../../lifecycle/state/db-archive.js')
    const stateDir = flags['state-dir']?.trim() ? flags['state-dir'] : resolveStateDir(process.env)
    // Files only, in the archive directory: the state database is not opened.
    const r = await this.withOperator({}, ({ progress }) =>
      pruneArchiveOf({
        stateDir,
        env: process.env,
        ...(flags.archive ? { archiveDir: flags.archive } : {}),
        keep: flags.keep,
        dryRun: flags['dry-run'],
        progress,
      }),
    )
    const verb = r.dryRun ? 'Would remove' : 'Removed'
    if (r.oldestKeptWal === null) {
      this.log(`Nothing to remove: ${r.kept.length - r.damaged.length} whole base backup(s), --keep ${r.keep}`)
    } else {
      this.log(
        `${verb} ${r.removed.length} base backup(s) and ${r.removedWalFiles} WAL file(s) before ${r.oldestKeptWal}: ${r.freedBytes} bytes`,
      )
      this.log(`Kept ${r.kept.length}: ${r.kept.join(', ')}`)
    }
    if (r.damaged.length > 0)
      this.warn(`damaged base backups (not counted, kept): ${r.damaged.join(', ')}; fleetkit db archive base-backup`)
    return r
  }
}
