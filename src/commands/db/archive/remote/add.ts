// `fleetkit db archive remote add URL --host-key LINE --identity FILE`: the directory on another host the
// WAL archive is shipped to over SFTP, its host key pinned (src/lifecycle/state/archive-ship.ts).
import { Args, Flags } from '@oclif/core'

import { stateDirFlag } from '../../../../cli/flags.js'
import { FleetkitCommand } from '../../../../cli/fleetkit-command.js'
import { resolveStateDir } from '../../../../config/state-dir.js'
import type { RemoteAddResult } from '../../../../lifecycle/state/archive-ship.js'

export default class DbArchiveRemoteAdd extends FleetkitCommand<RemoteAddResult> {
  static override summary = 'Name the directory on another host that the WAL archive is shipped to (SSH/SFTP).'
  static override description = `Checks the URL, the host key and the identity file, logs in to the host with that key
pinned (any other key is refused: ARCHIVE_REMOTE_HOST_KEY_MISMATCH) and makes the wal/ and base/
directories there; only then records the remote in <state>/postgres/archive-remote.json (the host key and
the identity file's path; the key itself is never copied) and an archive_remote_added event in the state
(if that event cannot be recorded, the remote recorded before is put back). Ship with fleetkit db archive
ship (a timer every minute). Running it again with the same values changes nothing; with others it
replaces them.`
  static override examples = [
    `<%= config.bin %> <%= command.id %> ssh://backup@vault.example.net/srv/fleetkit-archive --host-key "$(ssh-keyscan -t ed25519 vault.example.net | grep -v '^#')" --identity /root/.ssh/fleetkit-archive`,
  ]
  static override args = {
    url: Args.string({ description: 'ssh://USER@HOST[:PORT]/ABSOLUTE/PATH', required: true }),
  }
  static override flags = {
    'host-key': Flags.string({
      summary: "The host's key: a known_hosts line (from ssh-keyscan, checked out of band) or 'TYPE BASE64'.",
      required: true,
      helpValue: 'LINE',
    }),
    identity: Flags.string({
      summary: 'The private key file fleetkit logs in with (absolute path; its passphrase-less key or an agent).',
      required: true,
      helpValue: 'FILE',
    }),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<RemoteAddResult> {
    const { args, flags } = await this.parse(DbArchiveRemoteAdd)
    const { addArchiveRemote } = await import('../../../../lifecycle/state/archive-ship.js')
    const { openSftpArchive } = await import('../../../../sync/sftp-archive.js')
    const stateDir = flags['state-dir']?.trim() ? flags['state-dir'] : resolveStateDir(process.env)
    // Files (archive.json, archive-remote.json) and the remote; the state database opens only to record a change.
    const r = await this.withDeferredState({ stateDir }, ({ clock, progress, actor, withPool }) =>
      addArchiveRemote({
        stateDir,
        env: process.env,
        url: args.url,
        hostKeyLine: flags['host-key'],
        identityFile: flags.identity,
        now: () => clock.now(),
        openRemote: (remote) => openSftpArchive(remote, process.env),
        progress,
        actor,
        withPool: (work) => withPool((pool) => work(pool)),
      }),
    )
    this.log(
      r.changed
        ? `Off-host archive ${r.url} (host key ${r.hostKey.split(' ')[0]} pinned)`
        : `${r.url} already: nothing changed`,
    )
    this.log('Next: fleetkit db archive ship (schedule it every minute), then fleetkit db archive verify --remote')
    return r
  }
}
