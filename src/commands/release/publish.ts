// `fleetkit release publish`: put a packed, signed release into the state directory, where the
// gateway's enrollment listener serves it (src/release/publish-release.ts).
import { Flags } from '@oclif/core'

import { definitionFlag, envWithStateDir, stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import { resolveStateDir } from '../../config/state-dir.js'
import { loadDefinition } from '../../definition/load.js'
import { type PublishResult, publishRelease } from '../../release/publish-release.js'

export default class ReleasePublish extends FleetkitCommand<PublishResult> {
  static override summary =
    "Publish a packed, signed release into the state directory, where the gateway's enrollment listener serves it."
  static override description = `--dir is the version directory \`fleetkit release pack\` and \`fleetkit release sign\` wrote. The release is verified as a host verifies it (signature with the definition's release.publicKey, the signed names, SHA-256, one regular file per archive) before anything is written; a bad one is refused with its code and nothing is written.
SHA256SUMS, SHA256SUMS.sig and the archives the signed sums list are written to <state dir>/releases/<version>/ through a temporary directory renamed into place. The gateway serves them at <enrollment URL>/<version>/<file>, so release.url may be gateway.enrollUrl.
Publishing the same bytes again changes nothing (status "unchanged"); other bytes under a published version are refused with RELEASE_ALREADY_PUBLISHED unless --replace.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> --dir release/1.4.0 --version 1.4.0',
    '<%= config.bin %> <%= command.id %> --dir release/1.4.0 --version 1.4.0 --definition fleet.yaml --state-dir /var/lib/fleetkit --json',
  ]

  static override flags = {
    dir: Flags.string({
      summary: 'Version directory holding SHA256SUMS, SHA256SUMS.sig and the archives.',
      required: true,
      env: 'FLEETKIT_RELEASE_DIR',
    }),
    version: Flags.string({
      summary: 'Release version, MAJOR.MINOR.PATCH[-PRERELEASE]; the signed sums must list its archives only.',
      required: true,
      env: 'FLEETKIT_RELEASE_VERSION',
    }),
    definition: definitionFlag('fleet.yaml whose release.publicKey the release must be signed with.'),
    'state-dir': stateDirFlag("The gateway's state directory; the release goes to <state dir>/releases/<version>/."),
    replace: Flags.boolean({
      summary: 'Replace a version already published with other bytes (refused otherwise).',
      default: false,
    }),
  }

  async run(): Promise<PublishResult> {
    const { flags } = await this.parse(ReleasePublish)
    const definition = await loadDefinition(flags.definition)
    const stateDir = resolveStateDir(envWithStateDir(flags['state-dir']))
    const result = await this.withOperator({}, ({ progress }) =>
      publishRelease({
        dir: flags.dir,
        version: flags.version,
        stateDir,
        definition,
        replace: flags.replace,
        progress,
      }),
    )
    const what = { published: 'Published', unchanged: 'Already published, unchanged:', replaced: 'Replaced' }[
      result.status
    ]
    this.log(`${what} release ${result.version} (${result.architectures.join(', ')}) in ${result.dir}`)
    for (const file of result.files) this.log(`  ${file.sha256}  ${file.name}`)
    if (result.servedByGateway) this.log(`Hosts fetch it from this gateway: ${result.url}`)
    else
      this.log(
        `release.url is not the gateway's enrollment URL: hosts fetch ${result.url}, not this copy (set release.url to gateway.enrollUrl to serve it from the gateway)`,
      )
    return result
  }
}
