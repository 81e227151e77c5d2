// `fleetkit db archive remote remove`: stop shipping to the off-host archive (src/lifecycle/state/archive-ship.ts).
import { stateDirFlag } from '../../../../cli/flags.js'
import { FleetkitCommand } from '../../../../cli/fleetkit-command.js'
import { resolveStateDir } from '../../../../config/state-dir.js'
import type { RemoteRemoveResult } from '../../../../lifecycle/state/archive-ship.js'

export default class DbArchiveRemoteRemove extends FleetkitCommand<RemoteRemoveResult> {
  static override summary = 'Forget the off-host archive: nothing is shipped to it any more.'
  static override description = `Removes <state>/postgres/archive-remote.json and the last ship's status (archive-ship.json),
after a ship in progress has finished (ARCHIVE_BUSY after 5 s), and records an archive_remote_removed
event in the state (if that event cannot be recorded, both files are put back). The files on the remote host stay as they
are: remove them there if you mean to. Local archiving goes on. With the gateway installed, run
fleetkit gateway install again to stop and remove its shipping timer. Running it again changes nothing;
fleetkit db archive remote add with the same URL takes the directory up again.`
  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> --json']
  static override flags = {
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<RemoteRemoveResult> {
    const { flags } = await this.parse(DbArchiveRemoteRemove)
    const { removeRemote } = await import('../../../../lifecycle/state/archive-ship.js')
    const stateDir = flags['state-dir']?.trim() ? flags['state-dir'] : resolveStateDir(process.env)
    // Files (archive-remote.json, archive-ship.json); the state database opens only to record a change.
    const r = await this.withDeferredState({ stateDir }, ({ actor, withPool }) =>
      removeRemote({ stateDir, env: process.env, actor, withPool: (work) => withPool((pool) => work(pool)) }),
    )
    this.log(
      r.url === null
        ? 'No off-host archive is recorded: nothing changed'
        : `Forgot the off-host archive ${r.url}; its files there are kept`,
    )
    if (r.changed)
      this.log('Next: fleetkit gateway install (as root, where the gateway is installed: stops the shipping timer)')
    return r
  }
}
