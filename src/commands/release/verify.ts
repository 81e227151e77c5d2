// `fleetkit release verify`: check a published release exactly as a host's verifier does
// (src/release/verify-release.ts).
import { Flags } from '@oclif/core'

import { definitionFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import { resolveReleasePublicKey } from '../../release/release-public-key.js'
import { RELEASE_ARCHITECTURES, releaseArchitectureOf } from '../../release/release-name.js'
import { DEFAULT_MAX_ARCHIVE_BYTES, type VerifyResult, verifyRelease } from '../../release/verify-release.js'

export default class ReleaseVerify extends FleetkitCommand<VerifyResult> {
  static override summary =
    'Check a release as a host would: signature, signed file name, SHA-256 and archive contents.'
  static override description =
    '--dir names the version directory holding the three files; --url names the release root (release.url), the files being under <url>/<version>/. The binary is not run.'
  static override examples = [
    '<%= config.bin %> <%= command.id %> --dir release/1.4.0 --version 1.4.0 --public-key BASE64',
    '<%= config.bin %> <%= command.id %> --url https://releases.example.com/fleetkit --version 1.4.0 --arch arm64 --definition fleet.yaml',
  ]

  static override flags = {
    dir: Flags.string({
      summary: 'Version directory holding SHA256SUMS, SHA256SUMS.sig and the archives.',
      exactlyOne: ['dir', 'url'],
    }),
    url: Flags.string({
      summary: 'Release root URL (https); files are read from <url>/<version>/.',
      exactlyOne: ['dir', 'url'],
    }),
    version: Flags.string({ summary: 'Release version to check.', required: true, env: 'FLEETKIT_RELEASE_VERSION' }),
    arch: Flags.string({
      summary: "Architecture to check; defaults to this machine's.",
      options: [...RELEASE_ARCHITECTURES],
    }),
    'public-key': Flags.string({
      summary: "base64 of the raw Ed25519 public key; defaults to the definition's release.publicKey.",
      env: 'FLEETKIT_RELEASE_PUBLIC_KEY',
    }),
    definition: definitionFlag('fleet.yaml to read release.publicKey from when --public-key is not given.'),
    'ca-file': Flags.string({
      summary: 'PEM CA bundle trusted for --url instead of the system roots (a private mirror).',
    }),
    'max-bytes': Flags.integer({
      summary: 'Largest archive (and unpacked binary) accepted, in bytes.',
      min: 1,
      default: DEFAULT_MAX_ARCHIVE_BYTES,
    }),
  }

  async run(): Promise<VerifyResult> {
    const { flags } = await this.parse(ReleaseVerify)
    const publicKey = await resolveReleasePublicKey({ publicKey: flags['public-key'], definition: flags.definition })
    const arch = flags.arch ?? releaseArchitectureOf(process.arch) ?? process.arch
    const source =
      flags.dir !== undefined
        ? { dir: flags.dir }
        : { url: flags.url!, ...(flags['ca-file'] === undefined ? {} : { caFile: flags['ca-file'] }) }
    const result = await verifyRelease({
      source,
      version: flags.version,
      arch,
      publicKey,
      maxBytes: flags['max-bytes'],
    })
    this.log(`OK ${result.archive} (${result.source})`)
    this.log(`  signature: valid for key ${result.publicKey}`)
    this.log(`  sha256:    ${result.sha256}`)
    this.log(
      `  contents:  one regular file ${result.entry.name}, mode ${result.entry.mode}, ${result.entry.size} bytes`,
    )
    return result
  }
}
