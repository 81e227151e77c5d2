// `fleetkit gateway serve`: run the enrollment, agent (mTLS) and metrics listeners until a signal
// (src/gateway/serve.ts).
import { envWithStateDir, stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { ServeResult } from '../../gateway/serve.js'

export default class GatewayServe extends FleetkitCommand<ServeResult> {
  static override summary =
    'Run the gateway: the enrollment listener, the mTLS agent listener and the metrics listener.'
  static override description = `Configuration comes from the environment (see docs/gateway.md): DATABASE_URL,
FLEETKIT_STATE_DIR, FLEETKIT_PKI_DIR, FLEETKIT_ENROLL_BIND, FLEETKIT_AGENT_BIND, FLEETKIT_METRICS_BIND,
FLEETKIT_AGENT_CERT_LIFETIME_SECONDS, FLEETKIT_AGENT_RENEW_CHECK_SECONDS, FLEETKIT_NODE_UNHEALTHY_AFTER,
FLEETKIT_NODE_LOST_AFTER, FLEETKIT_SWEEP_LEASE_SECONDS. The sweep runs every 2 s on one gateway at a time (the sweep lease). Logs are JSON lines on stdout.
Stops cleanly on SIGTERM or SIGINT, writing pending heartbeats first.`
  static override enableJsonFlag = false
  static override flags = { 'state-dir': stateDirFlag() }

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    'FLEETKIT_AGENT_BIND=0.0.0.0:8443 FLEETKIT_ENROLL_BIND=0.0.0.0:8444 <%= config.bin %> <%= command.id %>',
  ]

  async run(): Promise<ServeResult> {
    const { flags } = await this.parse(GatewayServe)
    const { serveGateway } = await import('../../gateway/serve.js')
    const { runSweep } = await import('../../lifecycle/node/sweep.js')
    const { stateReadiness } = await import('../../lifecycle/view/fleet-ready.js')
    const { loadSweepThresholds } = await import('../../lifecycle/node/thresholds.js')
    const env = envWithStateDir(flags['state-dir'])
    // Checked before anything starts: a bad threshold refuses to serve rather than sweep wrongly.
    const thresholds = loadSweepThresholds(env)
    // Not withState: a server owns its pool for its whole life (its listeners, the sweeper, the PKI
    // reload share it), stops on SIGTERM/SIGINT by draining (src/gateway/serve.ts) and logs JSON lines,
    // not step lines; the one-step context of a command (opened, worked, closed) does not fit it.
    const result = await serveGateway({
      env,
      sweep: { run: (pool) => runSweep(pool, thresholds), thresholds },
      readiness: stateReadiness,
    })
    exitIfStillRunning()
    return result
  }
}

/**
 * Once the gateway has stopped, the process ends when nothing is left to run. Should something still
 * hold it open (seen under heavy load after the gateway had restarted its embedded server), a supervisor
 * would wait and then kill it: after 5 s it exits by itself, naming what was left. The timer is unref'd,
 * so a process that drains exits at once, as always.
 */
function exitIfStillRunning(): void {
  setTimeout(() => {
    const left = process.getActiveResourcesInfo().filter((r) => r !== 'Timeout')
    process.stdout.write(
      `${JSON.stringify({ level: 'warn', time: new Date().toISOString(), component: 'gateway', msg: 'exit_forced', left })}\n`,
    )
    process.exit(0)
  }, 5000).unref()
}
