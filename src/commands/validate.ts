// `fleetkit validate`: check a fleet definition (schema, semantic rules, and with --since the
// change itself). Thin: flags in, validateFleet() out, one summary line or every error.
import { Args, Flags } from '@oclif/core'

import { chooseDefinitionPath, definitionFlag, stateDirFlag } from '../cli/flags.js'
import { FleetkitCommand } from '../cli/fleetkit-command.js'
import {
  type FleetSummary,
  formatFleetSummary,
  formatPoolLines,
  validateFleet,
  type ValidatedFleet,
} from '../definition/validate-fleet.js'
import { formatFinding } from '../definition/sync-reachability.js'
import type { AnsibleSummary } from '../sync/ansible-check.js'
import type { OpenedTransitionFacts } from '../store/scheduling/open-transition-facts.js'

export type ValidateResult = FleetSummary & { ansible?: AnsibleSummary }

export default class Validate extends FleetkitCommand<ValidateResult> {
  static override summary = 'Validate a fleet definition: schema, semantic rules and, with --since, the change itself.'
  static override description =
    'Reports every error at once, one line each: CODE /json/pointer (line:column): message. Exit 0 when valid, 1 when not. A valid file may still get warnings, one line each (Warning (CODE) /json/pointer: message; in --json, result.findings): a node fleetkit sync could never reach (NODE_UNREACHABLE_BY_SYNC).'
  static override examples = [
    '<%= config.bin %> <%= command.id %> --definition fleet.yaml',
    '<%= config.bin %> <%= command.id %> --definition examples/fleet.yaml',
    '<%= config.bin %> <%= command.id %> --definition fleet.yaml --since origin/main --json',
  ]

  static override args = {
    file: Args.string({ description: 'fleet definition (YAML or JSON); same as --definition', required: false }),
  }

  static override flags = {
    definition: definitionFlag(),
    since: Flags.string({
      summary:
        'Git revision of the same file, or "applied" (the revision the last complete fleetkit sync applied): also check the change since then (transitions).',
      env: 'FLEETKIT_SINCE',
    }),
    'state-dir': stateDirFlag(
      'With --since: the state directory whose embedded PostgreSQL, if running, holds the facts (when DATABASE_URL is unset).',
    ),
    ansible: Flags.boolean({
      summary:
        'Also render the inventory (ansible-inventory --list) and syntax-check every playbook in ansible/playbooks/.',
    }),
  }

  async run(): Promise<ValidateResult> {
    const { args, flags, raw } = await this.parse(Validate)
    const path = chooseDefinitionPath({
      file: args.file,
      flag: flags.definition,
      raw,
      commandId: this.id ?? 'validate',
    })
    // With --since the transition rules read the state, if a database is reachable without
    // starting one. Loaded only then: `fleetkit validate` alone never loads pg.
    let state: OpenedTransitionFacts | undefined
    if (flags.since !== undefined) {
      const { openTransitionFacts } = await import('../store/scheduling/open-transition-facts.js')
      state = await openTransitionFacts(flags['state-dir'] ? { stateDir: flags['state-dir'] } : {})
      this.log(
        `Transition facts: ${state.description}${state.source === 'none' ? '; allocations, leases and canary runs are not checked' : ''}.`,
      )
    }
    let since = flags.since
    if (since === 'applied' && state) {
      const applied = await state.appliedRevision()
      if (!applied) {
        await state.close()
        const { FleetkitError } = await import('../checks/fleetkit-error.js')
        throw new FleetkitError(
          'DEFINITION_REVISION_UNKNOWN',
          `--since applied: ${state.source === 'none' ? 'no state database is reachable to read' : 'no fleetkit sync has converged every node at a committed revision yet, so there is no'} applied revision`,
          {
            actions: [
              'fleetkit sync --ref SHA (records the applied revision)',
              `fleetkit validate --definition ${path} --since REF`,
            ],
            data: { ref: 'applied' },
          },
        )
      }
      this.log(`Applied revision: ${applied.revision} (sync run ${applied.runId}).`)
      since = applied.revision
    }
    let validated: ValidatedFleet
    try {
      validated = await validateFleet({
        path,
        ...(since === undefined || !state ? {} : { since, facts: state.facts, factsSource: state.source }),
      })
    } finally {
      await state?.close()
    }
    const { definition, summary } = validated
    this.log(formatFleetSummary(summary))
    for (const line of formatPoolLines(summary)) this.log(line)
    for (const finding of summary.findings) this.log(formatFinding(finding))
    if (!flags.ansible) return summary
    const { assertAnsibleValid } = await import('../sync/ansible-check.js')
    const { loadHostPolicy } = await import('../definition/host-policy.js')
    // Ctrl-C or SIGTERM from here on ends ansible and removes its temporary directory; exit 130/143.
    const ansible = await this.withOperator({ interruptible: true }, ({ signal, progress }) =>
      assertAnsibleValid(definition, loadHostPolicy(), process.env, undefined, { signal, progress }),
    )
    this.log(`Ansible: the inventory loads and ${ansible.playbooks.length} playbooks pass --syntax-check.`)
    return { ...summary, ansible }
  }
}
