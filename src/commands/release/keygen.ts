// `fleetkit release keygen`: generate the fleet's Ed25519 release signing key
// (src/release/generate-signing-key.ts) and print its public key for release.publicKey.
import { Flags } from '@oclif/core'

import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import { generateSigningKey, type KeygenResult } from '../../release/generate-signing-key.js'

export default class ReleaseKeygen extends FleetkitCommand<KeygenResult> {
  static override summary =
    'Generate the Ed25519 release signing key (0600, never over an existing file) and print its public key.'
  static override description = `The private key is written to --output as the PKCS#8 PEM that \`openssl genpkey -algorithm ed25519\` writes, so \`fleetkit release sign --key\` and openssl both read it; it is never printed, and --json reports only its path and the public key.
--output is required: the key is the fleet's root of trust for agent binaries, best kept on a machine or medium kept offline, which is yours to choose; fleetkit's state directory is not that place.
An existing file (or link) at --output is refused with RELEASE_KEY_EXISTS and left untouched: a key is never overwritten, not even with --force. An --output inside a Git work tree that does not ignore it is refused with SECRET_OUTPUT_IN_GIT before anything is written; --force writes it there anyway.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> --output /media/offline/release.key',
    '<%= config.bin %> <%= command.id %> --output ~/keys/fleet-release.key --json',
  ]

  static override flags = {
    output: Flags.string({
      summary: 'Private key file to create (0600); must not exist. Keep it outside any repository.',
      required: true,
      helpValue: 'FILE',
    }),
    force: Flags.boolean({
      summary:
        'Write the key inside a Git work tree that does not ignore it (refused otherwise). Never overwrites an existing key.',
      default: false,
    }),
  }

  async run(): Promise<KeygenResult> {
    const { flags } = await this.parse(ReleaseKeygen)
    const result = await this.withOperator({}, () => generateSigningKey({ output: flags.output, force: flags.force }))
    this.log(
      `Wrote the release signing key to ${result.keyFile} (0600, PKCS#8 PEM). Keep it offline; it is never printed.`,
    )
    this.log(`Public key (release.publicKey in fleet.yaml): ${result.publicKey}`)
    return result
  }
}
