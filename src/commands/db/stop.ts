// `fleetkit db stop`: stop the embedded PostgreSQL of the state directory (src/store/admin.ts).
import { STATE_DIR_DEFAULT, stateDirFlag, stateDirOption } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { StopReport } from '../../store/admin.js'

export default class DbStop extends FleetkitCommand<StopReport> {
  static override summary = 'Stop the embedded PostgreSQL server of the state directory.'
  static override description = `The embedded server keeps running after the command that started it, shared by every
fleetkit process and the gateway on this machine. This stops it (fast shutdown: open sessions are
disconnected); the next command that needs state starts it again. A server named by DATABASE_URL is
never touched.`
  static override examples = ['<%= config.bin %> <%= command.id %>']

  static override flags = {
    'state-dir': stateDirFlag(`The state directory of the embedded server (default: ${STATE_DIR_DEFAULT}).`),
  }

  async run(): Promise<StopReport> {
    const { flags } = await this.parse(DbStop)
    const { stopEmbeddedDatabase } = await import('../../store/admin.js')
    const report = await stopEmbeddedDatabase(stateDirOption(flags['state-dir']))
    this.log(
      report.wasRunning
        ? `Stopped the embedded PostgreSQL (PID ${report.pid}) in ${report.dataDir}.`
        : `The embedded PostgreSQL in ${report.dataDir} was not running.`,
    )
    if (report.databaseUrl)
      this.log(`DATABASE_URL (${report.databaseUrl}) names another server; fleetkit does not stop it.`)
    return report
  }
}
