// `fleetkit sweep`: one sweep by hand, the one the gateway runs every 2 s (src/lifecycle/node/sweep.ts).
import { stateDirFlag } from '../cli/flags.js'
import { FleetkitCommand } from '../cli/fleetkit-command.js'
import type { SweepResult } from '../lifecycle/node/sweep.js'

export default class Sweep extends FleetkitCommand<SweepResult> {
  static override summary =
    'Run the sweep once: silent nodes become unhealthy, then lost (jobs fenced, allocations released); expired enrollments fail.'
  static override description = `Judged on the database's clock. Active nodes silent longer than FLEETKIT_NODE_UNHEALTHY_AFTER
(90 s) become unhealthy; nodes silent longer than FLEETKIT_NODE_LOST_AFTER (300 s, at least 30) become
lost, each in one transaction with one node_lost event. Provisioning nodes whose enrollment secret
expired unused become failed, with one enrollment_expired event each (node token or seed gives them a
new secret with --reissue; decommission retires them). If another sweep (a gateway's) is running, nothing is done and
"swept" is false.`
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    'FLEETKIT_NODE_LOST_AFTER=120 <%= config.bin %> <%= command.id %> --json',
  ]
  static override flags = { 'state-dir': stateDirFlag() }

  async run(): Promise<SweepResult> {
    const { flags } = await this.parse(Sweep)
    const { runSweep } = await import('../lifecycle/node/sweep.js')
    const { loadSweepThresholds } = await import('../lifecycle/node/thresholds.js')
    const thresholds = loadSweepThresholds(process.env)
    const result = await this.withState({ stateDir: flags['state-dir'] }, ({ pool }) => runSweep(pool, thresholds))
    if (!result.swept) {
      this.log('Another sweep holds the lock (a gateway is sweeping): nothing done.')
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
      `Swept in ${Math.round(result.durationMs)} ms: ${result.lost.length} lost, ${result.unhealthy.length} unhealthy, ${result.failed.length} failed (thresholds ${thresholds.unhealthyAfterSeconds} s / ${thresholds.lostAfterSeconds} s).`,
    )
    return result
  }
}
