// `fleetkit db migrate`: the one command that changes a shared database's schema
// (src/store/admin.ts); shows a first embedded start's progress on a terminal.
import { stateDirFlag, stateDirOption } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { MigrationReport } from '../../store/admin.js'

export default class DbMigrate extends FleetkitCommand<MigrationReport> {
  static override summary = 'Apply pending schema migrations to the state database.'
  static override description = `Forward-only: each numbered migration runs once, in its own transaction; several
processes migrating at once is safe. Starts the embedded server when DATABASE_URL is unset. Refuses a
database a newer fleetkit migrated (STATE_NEWER_THAN_CLI). The only command that changes the schema of a
DATABASE_URL database: every other command and the gateway refuse an older one (STATE_SCHEMA_OLD).
On a terminal, a first start shows its steps on stderr.`
  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> --json']

  static override flags = {
    'state-dir': stateDirFlag('The state directory of the embedded server (default $XDG_STATE_HOME/fleetkit).'),
  }

  async run(): Promise<MigrationReport> {
    const { flags } = await this.parse(DbMigrate)
    const { migrateDatabase } = await import('../../store/admin.js')
    // migrateDatabase opens the state itself, without a schema check, to change it: not withState.
    const report = await this.withOperator({}, ({ progress }) =>
      migrateDatabase({ ...stateDirOption(flags['state-dir']), progress }),
    )
    this.log(`Server: ${report.server.source === 'embedded' ? 'embedded' : 'DATABASE_URL'} ${report.server.url}`)
    if (report.applied.length === 0) this.log(`Schema version ${report.schema.version}: up to date.`)
    for (const m of report.applied) this.log(`  applied ${String(m.version).padStart(4, '0')}-${m.name}`)
    if (report.applied.length > 0) this.log(`Schema version ${report.schema.version}.`)
    return report
  }
}
