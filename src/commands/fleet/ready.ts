// `fleetkit fleet ready`: the fleet's verdict, per pool and for the fleet, from the state against the
// definition (src/lifecycle/view/fleet-ready.ts); exit 0 only when ready, FLEET_NOT_READY (exit 3) otherwise.
import { definitionFlag, stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { FleetReadyResult } from '../../lifecycle/view/fleet-ready.js'

export default class FleetReady extends FleetkitCommand<FleetReadyResult> {
  static override summary =
    'Say whether every node that should serve is admitted, healthy, converged, not drifted and on the accepted agent version.'
  static override description = `Nodes that should serve: those fleet.yaml declares active, and the other nodes of its pools in the
state that are not retired, parked or draining (a node declared drained or disabled does not serve). Each is judged on
what the state knows: admitted (node admit), healthy (not unhealthy or lost, its latest host checks not failed),
converged (its last fleetkit sync attempt converged it, with this definition file), not drifted (no fleetkit drift
since that sync found it differs) and on release.version's agent (as its heartbeats report it). Prints a line per pool
and one per failing criterion of each node, with its code and the next command. Exit 0 only when every pool is ready;
otherwise FLEET_NOT_READY, exit 3, with the whole verdict in the error's data.verdict under --json.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> --definition fleet.yaml',
    '<%= config.bin %> <%= command.id %> --json',
  ]
  static override flags = { definition: definitionFlag(), 'state-dir': stateDirFlag() }

  async run(): Promise<FleetReadyResult> {
    const { flags } = await this.parse(FleetReady)
    const { readDefinitionFile, validateDefinitionText, definitionErrorsToFleetkitError } =
      await import('../../definition/load.js')
    const { fleetReady, formatReadiness, notReadyError } = await import('../../lifecycle/view/fleet-ready.js')
    // The definition is read and validated before the state opens: a bad file fails at once.
    const text = await readDefinitionFile(flags.definition)
    const { definition, errors } = validateDefinitionText(text, flags.definition)
    if (errors.length > 0 || !definition) throw definitionErrorsToFleetkitError(flags.definition, errors)
    const result = await this.withState({ stateDir: flags['state-dir'] }, ({ pool }) =>
      fleetReady({ pool, definition, definitionText: text }),
    )
    for (const line of formatReadiness(result)) this.log(line)
    if (!result.ready) throw notReadyError(result)
    return result
  }
}
