// `fleetkit release sign`: sign a release's SHA256SUMS with the offline Ed25519 key
// (src/release/sign-release.ts).
import { Flags } from '@oclif/core'

import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import { type SignResult, signRelease } from '../../release/sign-release.js'

export default class ReleaseSign extends FleetkitCommand<SignResult> {
  static override summary =
    "Sign a release directory's SHA256SUMS with the offline Ed25519 key (writes SHA256SUMS.sig)."
  static override description =
    'The key is a PKCS#8 PEM Ed25519 private key as `fleetkit release keygen` and `openssl genpkey -algorithm ed25519` write it, readable by its owner only. The signature is base64 of the raw 64-byte signature, the bytes `openssl pkeyutl -sign -rawin` produces.'
  static override examples = ['<%= config.bin %> <%= command.id %> --key release.key --dir release/1.4.0']

  static override flags = {
    key: Flags.string({
      summary: 'Path of the Ed25519 private key (PKCS#8 PEM, mode 0600 or 0400).',
      required: true,
      env: 'FLEETKIT_RELEASE_KEY',
    }),
    dir: Flags.string({
      summary: 'Release version directory holding SHA256SUMS.',
      default: '.',
      env: 'FLEETKIT_RELEASE_DIR',
    }),
  }

  async run(): Promise<SignResult> {
    const { flags } = await this.parse(ReleaseSign)
    const result = await signRelease({ keyFile: flags.key, dir: flags.dir })
    this.log(
      `Signed ${result.sumsFile} (${result.files.length} archive${result.files.length === 1 ? '' : 's'}); wrote ${result.signatureFile}`,
    )
    this.log(`Public key (release.publicKey in fleet.yaml): ${result.publicKey}`)
    return result
  }
}
