// `fleetkit sweep`: one sweep by hand, the one the gateway runs every 2 s (src/lifecycle/node/sweep.ts), judged
// with the thresholds the gateways recorded (src/lifecycle/node/manual-sweep.ts).
import { Flags } from '@oclif/core'

import { stateDirFlag } from '../cli/flags.js'
import { FleetkitCommand } from '../cli/fleetkit-command.js'
import type { ManualSweepResult, ThresholdsOrigin } from '../lifecycle/node/manual-sweep.js'

export default class Sweep extends FleetkitCommand<ManualSweepResult> {
  static override summary =
    'Run the sweep once: silent nodes become unhealthy, then lost (jobs fenced, allocations released); expired enrollments fail.'
  static override description = `Judged on the database's clock, with the gateways' thresholds: the gateway that holds the sweep
lease records its FLEETKIT_NODE_UNHEALTHY_AFTER and FLEETKIT_NODE_LOST_AFTER in the state, and this sweep
uses them (the last recorded when no gateway sweeps now). If this environment sets either variable to
another value, it refuses with SWEEP_THRESHOLDS_DISAGREE and sweeps nothing, unless --thresholds-from-env.
If no gateway ever recorded any, it uses this environment's variables, else the defaults (90 s, 300 s),
and says so. Active nodes silent longer than the unhealthy threshold become unhealthy; nodes silent longer
than the lost threshold become lost, each in one transaction with one node_lost event. Provisioning nodes
whose enrollment secret expired unused become failed, with one enrollment_expired event each (node token
or seed gives them a new secret with --reissue; decommission retires them). If another sweep (a gateway's)
is running, nothing is done and "swept" is false.`
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    'FLEETKIT_NODE_LOST_AFTER=120 <%= config.bin %> <%= command.id %> --thresholds-from-env --json',
  ]
  static override flags = {
    'thresholds-from-env': Flags.boolean({
      summary:
        "Judge with this environment's FLEETKIT_NODE_* thresholds (defaults for unset ones), not the ones the gateways recorded.",
      default: false,
    }),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<ManualSweepResult> {
    const { flags } = await this.parse(Sweep)
    const { runManualSweep } = await import('../lifecycle/node/manual-sweep.js')
    const result = await this.withState({ stateDir: flags['state-dir'] }, ({ pool }) =>
      runManualSweep(pool, { env: process.env, thresholdsFromEnv: flags['thresholds-from-env'] }),
    )
    const { thresholds } = result
    const judged = `thresholds ${thresholds.unhealthyAfterSeconds} s / ${thresholds.lostAfterSeconds} s, ${describeOrigin(result.thresholdsFrom)}`
    if (result.unsweptSeconds !== undefined)
      this.log(
        `No gateway has held the sweep lease for ${result.unsweptSeconds} s, so none recorded heartbeats: that time is not counted as any node's silence.`,
      )
    if (!result.swept) {
      this.log(`Another sweep holds the lock (a gateway is sweeping): nothing done (${judged}).`)
      return result
    }
    for (const n of result.lost)
      this.log(
        `${n.nodeId}: lost after ${n.silentSeconds} s silent; ${n.fencedJobs} job(s) fenced, ${
          n.strandedAllocations > 0
            ? `${n.strandedAllocations} allocation(s) stranded (stateful pool): a person decides, fleetkit alloc release --stranded ${n.nodeId} --yes, or the node heartbeats again and they resume`
            : `${n.releasedAllocations} allocation(s) released`
        }`,
      )
    for (const n of result.resumed)
      this.log(`${n.nodeId}: heartbeats again; ${n.allocationIds.length} stranded allocation(s) active again`)
    for (const n of result.unhealthy) this.log(`${n.nodeId}: unhealthy after ${n.silentSeconds} s silent`)
    for (const n of result.failed)
      this.log(
        `${n.nodeId}: failed, its enrollment secret expired unused at ${n.expiredAt}; fleetkit node token ${n.nodeId} --reissue`,
      )
    this.log(
      `Swept in ${Math.round(result.durationMs)} ms: ${result.lost.length} lost, ${result.unhealthy.length} unhealthy, ${result.failed.length} failed (${judged}).`,
    )
    return result
  }
}

/** Where the thresholds came from, in the summary line's words. */
function describeOrigin(from: ThresholdsOrigin): string {
  const recorded = from.recorded
  const gateway = recorded
    ? `${recorded.holdsLease ? 'the sweeping gateway' : 'the last gateway that swept'}, ${recorded.holder}`
    : ''
  if (from.source === 'gateway') return `recorded by ${gateway}`
  const own = from.source === 'environment' ? 'from this environment' : 'the defaults'
  // Recorded but not used: only --thresholds-from-env does that.
  if (recorded)
    return `${own} (--thresholds-from-env; ${gateway} judges with ${recorded.thresholds.unhealthyAfterSeconds} s / ${recorded.thresholds.lostAfterSeconds} s)`
  return `${own}: no gateway recorded any`
}
