// `fleetkit drift`: the read-only form of sync (check mode with diff on every node at once), a table
// of what would change per node and role; exit 0 only when nothing drifted (src/sync/sync-run.ts).
import { Flags } from '@oclif/core'

import { ansibleSpeedFlags, ansibleSpeedOptions, definitionFlag, envWithStateDir, stateDirFlag } from '../cli/flags.js'
import { FleetkitCommand } from '../cli/fleetkit-command.js'
import type { SyncReport } from '../sync/sync-report.js'

export default class Drift extends FleetkitCommand<SyncReport> {
  static override summary =
    'Check every node against the definition and the roles (Ansible check mode); change nothing.'
  static override description = `Runs site.yml with --check --diff on every target node at once and lists, per node and role,
the tasks that would change. Recorded in the ledger as a drift run; takes no lock. Without --ref the hosts are
compared with the revision the last complete sync applied (the report's revision), or with the file on disk when
no sync has applied a committed revision yet. Nodes are reached at the addresses fleetkit sync uses: a node
fleetkit provisioned at its server's (an ssh.host that differs is NODE_ADDRESS_DISAGREES).

Exit codes: 0 nothing drifted; 1 DRIFT_DETECTED; 21 SYNC_PARTIAL_FAILURE (a check failed on a node);
22 SYNC_NODES_UNREACHABLE; 2 a refused input.`

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --limit build-1 --json',
  ]

  static override flags = {
    definition: definitionFlag(),
    'state-dir': stateDirFlag(),
    ref: Flags.string({
      summary:
        'Full commit SHA of the fleet repository: compare with the definition at that commit (default: the revision the last complete sync applied).',
    }),
    limit: Flags.string({ summary: 'Only these nodes (ids, comma-separated).', multiple: true, delimiter: ',' }),
    tags: Flags.string({
      summary: 'Only these roles (site.yml tags, comma-separated).',
      multiple: true,
      delimiter: ',',
    }),
    ...ansibleSpeedFlags(),
  }

  async run(): Promise<SyncReport> {
    const { flags } = await this.parse(Drift)
    const { runSync } = await import('../sync/sync-run.js')
    const { outcomeError } = await import('../sync/sync-report.js')
    const { readGatewayCaBundle } = await import('../lifecycle/seed/seed-files.js')
    const env = envWithStateDir(flags['state-dir'])
    const report = await this.withState(
      { stateDir: flags['state-dir'], interruptible: true },
      ({ pool, actor, clock, signal, progress }) =>
        runSync({
          mode: 'drift',
          definitionPath: flags.definition,
          ref: flags.ref,
          limit: flags.limit,
          tags: flags.tags,
          ...ansibleSpeedOptions(flags),
          // Test harnesses only (docs/operations.md): the container hosts' vars, as sync passes them.
          extraVarsFile: env.FLEETKIT_SYNC_EXTRA_VARS_FILE?.trim() || undefined,
          env,
          who: actor,
          clock,
          pool,
          signal,
          progress,
          report: () => undefined,
          // The inventory's release CA when release.url is the gateway's enrollment listener, as sync reads it.
          gatewayCa: () => readGatewayCaBundle(env),
        }),
    )
    const { formatDriftTable } = await import('../sync/drift-table.js')
    for (const line of formatDriftTable(report)) this.log(line)
    const error = outcomeError(report)
    if (error) throw error
    return report
  }
}
