// `fleetkit version`: what to quote in a bug report; under --json the same in the success envelope.
import { FleetkitCommand } from '../cli/fleetkit-command.js'

export interface VersionResult {
  /** @const "fleetkit" */
  name: string
  /** @pattern ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ */
  version: string
  /**
   * `fleetkit/0.1.0 linux-x64 node-v20.19.0`, what `fleetkit --version` prints.
   * @pattern ^fleetkit/\S+ \S+ node-v\S+$
   */
  userAgent: string
  /** @pattern ^v[0-9]+\.[0-9]+\.[0-9]+ */
  node: string
  /** @minLength 1 */
  platform: string
  /** @minLength 1 */
  arch: string
}

export default class Version extends FleetkitCommand<VersionResult> {
  static override summary = "Print fleetkit's version, and the Node.js and platform it runs on."
  static override description =
    'The agent installed from a release has the same version as the fleetkit that packed it. `fleetkit --version` prints the same line.'
  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> --json']

  async run(): Promise<VersionResult> {
    await this.parse(Version)
    const result: VersionResult = {
      name: this.config.name,
      version: this.config.version,
      userAgent: this.config.userAgent,
      node: process.version,
      platform: process.platform,
      arch: process.arch,
    }
    this.log(result.userAgent)
    return result
  }
}
