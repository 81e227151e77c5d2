// `fleetkit db backup [--out FILE]`: the state database and the PKI directory in one file
// (src/lifecycle/state/db-backup.ts).
import { Flags } from '@oclif/core'

import { pkiDirFlag, pkiDirOf, stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { BackupResult } from '../../lifecycle/state/db-backup.js'

export default class DbBackup extends FleetkitCommand<BackupResult> {
  static override summary = 'Back up the state database and the PKI directory into one file (0600).'
  static override description = `One consistent snapshot of every table (one REPEATABLE READ transaction, while gateways
keep running), the PKI directory beside it, and a manifest with each part's SHA-256, in a gzip'd tar
written 0600 and never over an existing file. Works for the embedded server and DATABASE_URL. The file
holds the CA key and the secrets' hashes: keep it as you keep the CA key. A file inside a Git work tree
that does not ignore it (the default here included) is refused (SECRET_OUTPUT_IN_GIT) unless --force.
Ctrl-C or SIGTERM removes the staged copy before exiting; what a killed backup left beside the output
is removed by the next backup into that directory. docs/state.md says what a restore brings back and
what it forgets.`
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --out /backups/fleet-$(date +%F).tar.gz --json',
  ]
  static override flags = {
    out: Flags.string({
      summary: 'The file to write (default fleetkit-backup-<UTC time>.tar.gz here); never overwritten.',
      helpValue: 'FILE',
    }),
    force: Flags.boolean({
      summary: 'Write the backup inside a Git work tree that does not ignore it (refused otherwise). Never overwrites.',
      default: false,
    }),
    'pki-dir': pkiDirFlag(),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<BackupResult> {
    const { flags } = await this.parse(DbBackup)
    const { backupState, defaultBackupName } = await import('../../lifecycle/state/db-backup.js')
    const pkiDir = pkiDirOf(flags)
    // Interruptible: Ctrl-C or SIGTERM removes the staged copy (it holds the CA key) before the command exits.
    const r = await this.withState(
      { stateDir: flags['state-dir'], schema: 'none', interruptible: true },
      ({ pool, clock, progress, signal }) => {
        const now = clock.now()
        const out = flags.out ?? defaultBackupName(now)
        return backupState({ pool, pkiDir, out, now, progress, force: flags.force, signal })
      },
    )
    const rows = r.tables.reduce((sum, t) => sum + t.rows, 0)
    this.log(`Wrote ${r.file} (${r.bytes} bytes, mode 0600: it holds the CA key and the secrets' hashes)`)
    this.log(`  snapshot of ${r.takenAt}, schema version ${r.schemaVersion}, ${r.tables.length} tables, ${rows} rows`)
    this.log(`  PKI: ${r.pkiFiles.length > 0 ? r.pkiFiles.join(', ') : 'none (no PKI directory)'}`)
    this.log(`  sha256 ${r.sha256}`)
    if (r.removedStaleFiles.length > 0)
      this.log(`  removed what interrupted backups had left beside it: ${r.removedStaleFiles.join(', ')}`)
    return r
  }
}
