// `fleetkit node check`: run the host checks on a node through its agent and print each result
// (src/lifecycle/node/node-check.ts); an interrupt withdraws the queued job.
import { Args, Flags } from '@oclif/core'

import { stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { NodeCheckResult } from '../../lifecycle/node/node-check.js'

export default class NodeCheck extends FleetkitCommand<NodeCheckResult> {
  static override summary = "Run the host check suite on a node through its agent and print each check's result."
  static override description = `Queues a checks job for the node; its fleetkit-agent leases it, runs the host checks
(br_netfilter, data volume, firewall, free disk, its unit, certificate expiry, clock skew) and reports each check ID
with its status (pass, warn, fail, or not_applicable: on a node that declares container: true the kernel check,
br_netfilter, does not apply and is counted neither as passed nor as failed) and failure code. Fails with NODE_CHECK_FAILED when a check fails, NODE_CHECK_TIMEOUT when no result
arrives, NODE_NOT_ENROLLED at once for a node whose agent has not enrolled, NODE_CHECK_RESULT_INVALID for a result it
cannot read. Ctrl-C or SIGTERM withdraws the queued job (NODE_CHECK_INTERRUPTED).`
  static override examples = [
    '<%= config.bin %> <%= command.id %> build-01',
    '<%= config.bin %> <%= command.id %> build-01 --timeout 120 --json',
  ]
  static override args = { node: Args.string({ description: 'node id', required: true }) }
  static override flags = {
    timeout: Flags.integer({ summary: 'Seconds to wait for the result.', default: 60, min: 1, max: 3600 }),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<NodeCheckResult> {
    const { args, flags } = await this.parse(NodeCheck)
    const { runNodeCheck, formatCheck, summariseChecks } = await import('../../lifecycle/node/node-check.js')
    // The first Ctrl-C or SIGTERM withdraws the job and ends the command; a second one exits at once.
    const result = await this.withState(
      { stateDir: flags['state-dir'], interruptible: true },
      ({ pool, clock, signal, progress }) => {
        // The database is open: the job's own lines (on stderr) follow, without a step line redrawn between them.
        progress.done()
        return runNodeCheck({
          pool,
          nodeId: args.node,
          timeoutSeconds: flags.timeout,
          clock,
          signal,
          onProgress: (p) => {
            if (this.jsonEnabled()) return
            const state =
              p.status === 'queued'
                ? 'queued, waiting for the agent'
                : p.status === 'leased'
                  ? `running on the node (attempt ${p.attempts})`
                  : p.status
            process.stderr.write(`[${p.waitedSeconds}s] job ${p.jobId}: ${state}\n`)
          },
        })
      },
    )
    for (const check of result.checks) this.log(formatCheck(check))
    this.log(summariseChecks(result.nodeId, result.checks))
    return result
  }
}
