// `fleetkit db restore FILE [--force]`: the state database and PKI directory from `fleetkit db
// backup` (src/lifecycle/state/db-restore.ts); `fleetkit db restore --to TIME`: the embedded server's
// database as it was at TIME, from its WAL archive (src/store/embedded/point-in-time.ts).
import { Args, Flags } from '@oclif/core'

import { pkiDirFlag, pkiDirOf, stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import { FleetkitError } from '../../checks/fleetkit-error.js'
import { resolveStateDir } from '../../config/state-dir.js'
import type { DbRestoreOutput } from '../../lifecycle/state/db-restore.js'

export default class DbRestore extends FleetkitCommand<DbRestoreOutput> {
  static override summary =
    'Restore the state database and the PKI directory from a backup file, or the embedded database to a time.'
  static override description = `Checks every part's SHA-256 against the backup's manifest, the schema version (a newer
one is refused; an older one is migrated after the load) and the target before it changes anything;
then replaces the database in one transaction and puts the PKI directory in place. A database or PKI
directory that already holds state is replaced only with --force (the old PKI directory is renamed
aside, never deleted). Stop the gateways that use the database first. docs/state.md says what a
restore forgets.

With --to TIME (and no FILE): the embedded server's database as it was at TIME, from the WAL archive
(fleetkit db archive enable): the last base backup that ended before TIME, then PostgreSQL replays the
archived WAL up to TIME and carries on from there. The replaced data directory is kept aside; a TIME past
the archive's end is refused after the replay and the old directory put back. The PKI directory is not
touched. --to latest replays every segment the archive holds (a new machine restored from the
off-host archive: fleetkit db archive fetch, then this).`
  static override examples = [
    '<%= config.bin %> <%= command.id %> fleetkit-backup-20261204T010000Z.tar.gz',
    '<%= config.bin %> <%= command.id %> --to 2026-12-04T09:30:00Z',
    'DATABASE_URL=postgres://fleet@db.example.net/fleet <%= config.bin %> <%= command.id %> backup.tar.gz --force --json',
  ]
  static override args = {
    file: Args.string({ description: 'the backup file (from fleetkit db backup); not with --to' }),
  }
  static override flags = {
    force: Flags.boolean({
      summary: 'Replace a database or PKI directory that holds state (the PKI one is kept aside).',
    }),
    to: Flags.string({
      summary:
        "Restore the embedded database to this moment (ISO 8601 with a zone: 2026-12-04T09:30:00Z), or 'latest': the archive's end.",
      helpValue: 'TIME',
    }),
    archive: Flags.string({
      summary: 'The WAL archive to restore from (default: the one fleetkit db archive enable recorded).',
      helpValue: 'DIR',
      dependsOn: ['to'],
    }),
    'pki-dir': pkiDirFlag(),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<DbRestoreOutput> {
    const { args, flags } = await this.parse(DbRestore)
    if ((flags.to === undefined) === (args.file === undefined)) {
      throw new FleetkitError('USAGE_INVALID', 'give a backup FILE or --to TIME (one of them)', {
        actions: ['fleetkit db restore FILE', 'fleetkit db restore --to 2026-12-04T09:30:00Z'],
      })
    }
    if (flags.to !== undefined) return this.toTime(flags.to, flags.archive, flags['state-dir'])
    const file = args.file!
    const { restoreState } = await import('../../lifecycle/state/db-restore.js')
    const pkiDir = pkiDirOf(flags)
    // The database is opened (the embedded server started) only once the file passed its checks.
    const r = await this.withDeferredState(
      { stateDir: flags['state-dir'], schema: 'none' },
      ({ withPool, actor, clock, progress }) =>
        restoreState({ withPool, file, pkiDir, force: flags.force, actor, now: clock.now(), progress }),
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

  private async toTime(to: string, archive: string | undefined, stateDirFlagValue: string | undefined) {
    const { restoreToTime, parseRestoreTime } = await import('../../store/embedded/point-in-time.js')
    const toEnd = to.trim() === 'latest'
    if (process.env.DATABASE_URL?.trim()) {
      throw new FleetkitError('ARCHIVE_NOT_EMBEDDED', 'DATABASE_URL is set: --to restores the embedded server only', {
        actions: ["restore that server to a time with its own tools (its provider's point-in-time recovery)"],
      })
    }
    const stateDir = stateDirFlagValue?.trim() ? stateDirFlagValue : resolveStateDir(process.env)
    // The embedded server is stopped and its data directory replaced: no pool to hand out, so not withState.
    const r = await this.withOperator({}, ({ clock, progress }) =>
      restoreToTime({
        stateDir,
        target: toEnd ? clock.now() : parseRestoreTime(to),
        toEnd,
        ...(archive ? { archiveDir: archive } : {}),
        now: clock.now(),
        progress,
      }),
    )
    this.log(
      `Restored the embedded database to ${toEnd ? `the archive's end (${r.replayedLsn})` : r.target} from base backup ${r.baseBackup} and ${r.archiveDir}/wal`,
    )
    this.log(`  last transaction replayed: ${r.recoveredTo ?? 'none after the base backup'}`)
    this.log(`  the data directory it replaced: ${r.keptAside ?? 'none (there was none)'}`)
    this.log('What a restore forgets: docs/state.md. Start the gateways again.')
    return r
  }
}
