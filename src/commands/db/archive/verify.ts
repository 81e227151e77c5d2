// `fleetkit db archive verify [--remote] [--restore]`: every checksum, the WAL from the newest base
// backup unbroken, and with --restore a real restore into a scratch directory (src/lifecycle/state/archive-verify.ts).
import { Flags } from '@oclif/core'

import { stateDirFlag } from '../../../cli/flags.js'
import { FleetkitCommand } from '../../../cli/fleetkit-command.js'
import { resolveStateDir } from '../../../config/state-dir.js'
import type { ArchiveVerifyResult } from '../../../lifecycle/state/archive-verify.js'

export default class DbArchiveVerify extends FleetkitCommand<ArchiveVerifyResult> {
  static override summary = 'Prove the WAL archive (local, or the off-host copy) can restore to its newest segment.'
  static override description = `Reads every file that has a checksum in full and compares it (on the off-host archive,
the NAME.sha256 each shipped file has; base backups against their manifest), finds the newest whole base
backup and checks that the WAL from its start segment runs without a gap to the newest segment. With
--restore it proves it: that base backup and WAL are fetched (checked again) into a scratch directory in
the state directory, a scratch PostgreSQL replays all of it with archiving off, and the last record it
replayed must lie in the newest segment; the scratch server is stopped and the directory removed after.
Fails with ARCHIVE_VERIFY_FAILED naming each damaged file and missing segment. Reads only; never changes
an archive.`
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --remote --restore --json',
  ]
  static override flags = {
    remote: Flags.boolean({
      summary: 'Verify the off-host archive (fleetkit db archive remote add) over SFTP.',
      default: false,
    }),
    restore: Flags.boolean({
      summary: 'Also restore the newest base backup and all the WAL after it into a scratch directory.',
      default: false,
    }),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<ArchiveVerifyResult> {
    const { flags } = await this.parse(DbArchiveVerify)
    const { verifyArchive } = await import('../../../lifecycle/state/archive-verify.js')
    const { openSftpArchive } = await import('../../../sync/sftp-archive.js')
    const stateDir = flags['state-dir']?.trim() ? flags['state-dir'] : resolveStateDir(process.env)
    const r = await this.withOperator({}, ({ clock, progress }) =>
      verifyArchive({
        stateDir,
        env: process.env,
        remote: flags.remote,
        restore: flags.restore,
        now: () => clock.now(),
        openRemote: (remote) => openSftpArchive(remote, process.env),
        progress,
      }),
    )
    this.log(`${r.location}: ${r.checkedFiles} file(s) checked, none damaged`)
    this.log(`  from base backup ${r.baseBackup} (segment ${r.wal?.start}) to ${r.wal?.newest ?? 'no segment'}: no gap`)
    if (r.restore)
      this.log(
        `  a restore replayed to ${r.restore.replayedLsn} (segment ${r.restore.reachedWal}), last transaction ${r.restore.recoveredTo ?? 'none after the base backup'}`,
      )
    return r
  }
}
