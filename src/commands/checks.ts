// `fleetkit checks`: list the failure-code and check-ID registry (src/checks/registry.ts)
// with each entry's owner and runbook.
import { FleetkitCommand } from '../cli/fleetkit-command.js'
import { describeRegistry, type RegistryReport } from '../checks/registry.js'

export default class Checks extends FleetkitCommand<RegistryReport> {
  static override summary = 'List every failure code and check ID with its owner and runbook.'
  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> --json']

  async run(): Promise<RegistryReport> {
    await this.parse(Checks)
    const report = await describeRegistry()
    const width = Math.max(...report.codes.map((c) => c.code.length))
    this.log(`Failure codes (${report.codes.length}, ${report.codes.filter((c) => c.person).length} need a person):`)
    for (const c of report.codes) this.log(`  ${c.code.padEnd(width)}  ${c.person ? 'person' : 'auto  '}  ${c.summary}`)
    const idWidth = Math.max(...report.checks.map((c) => c.id.length))
    this.log(`\nCheck IDs (${report.checks.length}):`)
    for (const c of report.checks) this.log(`  ${c.id.padEnd(idWidth)}  ${c.ownerText}`)
    return report
  }
}
