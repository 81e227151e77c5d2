// `fleetkit db restore FILE [--force]`: the state database and PKI directory from `fleetkit db
// backup` (src/lifecycle/db-restore.ts).
import { Args, Flags } from '@oclif/core'

import { pkiDirFlag, pkiDirOf, stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import { withDatabase } from '../../cli/with-database.js'
import type { RestoreResult } from '../../lifecycle/db-restore.js'

export default class DbRestore extends FleetkitCommand<RestoreResult> {
  static override summary = 'Restore the state database and the PKI directory from a backup file.'
  static override description = `Checks every part's SHA-256 against the backup's manifest, the schema version (a newer
one is refused; an older one is migrated after the load) and the target before it changes anything;
then replaces the database in one transaction and puts the PKI directory in place. A database or PKI
directory that already holds state is replaced only with --force (the old PKI directory is renamed
aside, never deleted). Stop the gateways that use the database first. docs/state.md says what a
restore forgets.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> fleetkit-backup-20261204T010000Z.tar.gz',
    'DATABASE_URL=postgres://fleet@db.example.net/fleet <%= config.bin %> <%= command.id %> backup.tar.gz --force --json',
  ]
  static override args = {
    file: Args.string({ description: 'the backup file (from fleetkit db backup)', required: true }),
  }
  static override flags = {
    force: Flags.boolean({
      summary: 'Replace a database or PKI directory that holds state (the PKI one is kept aside).',
    }),
    'pki-dir': pkiDirFlag(),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<RestoreResult> {
    const { args, flags } = await this.parse(DbRestore)
    const { restoreState } = await import('../../lifecycle/db-restore.js')
    const { actorOf } = await import('../../lifecycle/secret-reissue.js')
    const pkiDir = pkiDirOf(flags)
    const r = await this.withProgress((progress) =>
      withDatabase(
        flags['state-dir'],
        progress,
        (pool) =>
          restoreState({
            pool,
            file: args.file,
            pkiDir,
            force: flags.force,
            actor: actorOf(process.env),
            now: new Date(),
            progress,
          }),
        'none',
      ),
    )
    const rows = r.tables.reduce((sum, t) => sum + t.rows, 0)
    this.log(
      `Restored the snapshot of ${r.takenAt}: ${r.tables.length} tables, ${rows} rows, schema version ${r.schemaVersion}`,
    )
    for (const m of r.migrated) this.log(`  migrated ${String(m.version).padStart(4, '0')}-${m.name}`)
    if (r.pki.restored)
      this.log(`  PKI in ${r.pki.dir}${r.pki.keptAside ? ` (the one there before: ${r.pki.keptAside})` : ''}`)
    this.log('What a restore forgets: docs/state.md. Start the gateways again.')
    return r
  }
}
