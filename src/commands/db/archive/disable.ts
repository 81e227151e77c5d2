// `fleetkit db archive disable`: the embedded server stops archiving its WAL (src/lifecycle/state/db-archive.ts).
import { stateDirFlag } from '../../../cli/flags.js'
import { FleetkitCommand } from '../../../cli/fleetkit-command.js'
import type { ArchiveDisableResult } from '../../../lifecycle/state/db-archive.js'

export default class DbArchiveDisable extends FleetkitCommand<ArchiveDisableResult> {
  static override summary = 'Stop archiving the embedded server WAL (the archive directory is left as it is).'
  static override description = `Resets archive_mode and archive_command and restarts the embedded server (running
gateways answer 503 for a moment). The archive directory keeps its segments and base backups: a restore
to a time before now still works from it with --archive DIR. A no-op when archiving is off.`
  static override examples = ['<%= config.bin %> <%= command.id %>']
  static override flags = {
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<ArchiveDisableResult> {
    const { flags } = await this.parse(DbArchiveDisable)
    const { disableArchiving } = await import('../../../lifecycle/state/db-archive.js')
    const r = await this.withState({ stateDir: flags['state-dir'], embedded: 'restarts' }, (context) =>
      disableArchiving({ ...context, env: process.env, now: () => context.clock.now() }),
    )
    this.log(
      r.changed ? `Archiving off; ${r.dir || 'the archive'} is left as it is` : 'Archiving was off: nothing changed',
    )
    return r
  }
}
