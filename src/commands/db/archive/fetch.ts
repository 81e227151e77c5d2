// `fleetkit db archive fetch URL DIR`: on a machine replacing the control host, the off-host archive's
// newest base backup and the WAL after it, verified, into a local archive directory
// (src/lifecycle/state/archive-fetch.ts); `db restore --to latest --archive DIR` then restores from it.
import { Args, Flags } from '@oclif/core'

import { gatewayEnvFlag, stateDirFlag } from '../../../cli/flags.js'
import { FleetkitCommand } from '../../../cli/fleetkit-command.js'
import { resolveStateDir } from '../../../config/state-dir.js'
import type { ArchiveFetchResult } from '../../../lifecycle/state/archive-fetch.js'

export default class DbArchiveFetch extends FleetkitCommand<ArchiveFetchResult> {
  static override summary =
    'Fetch the off-host archive (its newest base backup and the WAL after it) into a local directory.'
  static override description = `For a new control host: logs in with the host key pinned, checks every shipped file's
SHA-256 and the WAL from the newest whole base backup for gaps (as db archive verify --remote does;
ARCHIVE_VERIFY_FAILED fetches nothing), then fetches that base backup and WAL into DIR (which must hold
no archive yet), each file compared with its checksum again, and the kit: the embedded server's password,
the PKI directory, the published releases, and the gateway unit's environment file to --gateway-env (kept
when a file is there already). Then: fleetkit db restore --to latest
--archive DIR (docs/state.md, "Replacing the control host").`
  static override examples = [
    `<%= config.bin %> <%= command.id %> ssh://backup@vault.example.net/srv/fleetkit-archive /var/backups/fleetkit-restore --host-key "vault.example.net ssh-ed25519 AAAA..." --identity /root/.ssh/fleetkit-archive`,
  ]
  static override args = {
    url: Args.string({ description: 'ssh://USER@HOST[:PORT]/ABSOLUTE/PATH of the off-host archive', required: true }),
    dir: Args.string({
      description: 'the local directory to fetch into (absolute; created if missing)',
      required: true,
    }),
  }
  static override flags = {
    'host-key': Flags.string({
      summary: "The host's key: a known_hosts line (checked out of band) or 'TYPE BASE64'.",
      required: true,
      helpValue: 'LINE',
    }),
    identity: Flags.string({
      summary: 'The private key file to log in with (absolute path).',
      required: true,
      helpValue: 'FILE',
    }),
    'gateway-env': gatewayEnvFlag(
      "Where the kit's gateway.env goes (the gateway unit's environment file); a file already there is kept.",
    ),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<ArchiveFetchResult> {
    const { args, flags } = await this.parse(DbArchiveFetch)
    const { fetchRemoteArchive } = await import('../../../lifecycle/state/archive-fetch.js')
    const { openSftpArchive } = await import('../../../sync/sftp-archive.js')
    const stateDir = flags['state-dir']?.trim() ? flags['state-dir'] : resolveStateDir(process.env)
    const r = await this.withOperator({}, ({ clock, progress }) =>
      fetchRemoteArchive({
        stateDir,
        env: process.env,
        url: args.url,
        hostKeyLine: flags['host-key'],
        identityFile: flags.identity,
        dir: args.dir,
        gatewayEnvFile: flags['gateway-env'],
        now: () => clock.now(),
        openRemote: (remote) => openSftpArchive(remote, process.env),
        progress,
      }),
    )
    this.log(
      `Fetched base backup ${r.baseBackup} and the WAL to ${r.newestWal ?? 'its start'} into ${r.dir} (${r.files} files)`,
    )
    if (r.gatewayEnv === 'fetched') this.log(`Wrote the old control host's ${r.gatewayEnvFile}`)
    else if (r.gatewayEnv === 'kept')
      this.log(`Kept ${r.gatewayEnvFile} as it is (the archive holds the old host's too)`)
    this.log(`Next: fleetkit db restore --to latest --archive ${r.dir}`)
    return r
  }
}
