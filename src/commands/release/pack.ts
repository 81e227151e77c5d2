// `fleetkit release pack`: pack built agent binaries into a release directory
// (src/release/pack-release.ts), with progress on a terminal.
import { Flags } from '@oclif/core'
import { join } from 'node:path'

import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import { type PackResult, packRelease } from '../../release/pack-release.js'

export default class ReleasePack extends FleetkitCommand<PackResult> {
  static override summary =
    'Pack built agent binaries into a release directory: one .tar.zst per architecture and SHA256SUMS.'
  static override description =
    'DIST holds linux-amd64/fleetkit-agent and/or linux-arm64/fleetkit-agent. The output directory is what you upload as <release.url>/<version>/ after `fleetkit release sign`.'
  static override examples = [
    '<%= config.bin %> <%= command.id %> --version 1.4.0 --input build/agent',
    '<%= config.bin %> <%= command.id %> --version 1.4.0 --input build/agent --output release/1.4.0 --json',
  ]

  static override flags = {
    version: Flags.string({
      summary: 'Release version, MAJOR.MINOR.PATCH[-PRERELEASE].',
      required: true,
      env: 'FLEETKIT_RELEASE_VERSION',
    }),
    input: Flags.string({
      summary: 'Directory holding linux-<amd64|arm64>/fleetkit-agent.',
      required: true,
      env: 'FLEETKIT_RELEASE_INPUT',
    }),
    output: Flags.string({
      summary: 'Version directory to write; defaults to release/<version>.',
      env: 'FLEETKIT_RELEASE_OUTPUT',
    }),
  }

  async run(): Promise<PackResult> {
    const { flags } = await this.parse(ReleasePack)
    const outputDir = flags.output ?? join('release', flags.version)
    const result = await this.withOperator({}, ({ progress }) =>
      packRelease({ version: flags.version, inputDir: flags.input, outputDir, progress }),
    )
    for (const archive of result.archives) this.log(`${archive.sha256}  ${archive.name}`)
    this.log(
      `Wrote ${result.sumsFile}; sign it with: fleetkit release sign --key release.key --dir ${result.outputDir}`,
    )
    return result
  }
}
