// `fleetkit reconcile`: repair drifted and behind nodes unattended, on a budget (src/lifecycle/reconcile/),
// through the same runSync as `fleetkit sync`, actor `reconcile`. Thin: flags in, runReconcile() out.
import { Flags } from '@oclif/core'

import { ansibleSpeedFlags, ansibleSpeedOptions, definitionFlag, envWithStateDir, stateDirFlag } from '../cli/flags.js'
import { FleetkitCommand } from '../cli/fleetkit-command.js'
import type { ReconcileOutput } from '../lifecycle/reconcile/reconcile.js'
import { syncRuntime } from './sync.js'

export default class Reconcile extends FleetkitCommand<ReconcileOutput> {
  static override summary =
    'Repair drifted and behind nodes unattended: the canary first, at most N at a time and M sync runs an hour.'
  static override description = `Every --interval (or once with --once) a pass: a drift check (check mode, recorded in the ledger)
of the nodes it may touch, then the nodes fleet ready judges drifted (a drift run since their last sync found a
difference) or behind (not converged for this definition, or on another agent version) are synced through the
same path as fleetkit sync, with --full: the canary alone first (the definition's canary when it is one of them,
else the first by id), then at most --parallel nodes per run. Every run is in the ledger with actor reconcile, and
at most --max-runs-per-hour such runs start in any hour, counted from the ledger (a restart does not reset it).
Nodes held (fleetkit node hold), draining, parked, not admitted, unhealthy or lost are left alone and listed.

On the first run that does not converge reconcile stops: it records a reconcile_stopped event and a stop the
gateway's /metrics serves (fleetkit_reconcile_stopped, alert FleetkitReconcileStopped), and does nothing more
until a person fixes the node and runs fleetkit reconcile --clear. The long-running form keeps running while
stopped (each pass says so); --once exits RECONCILE_STOPPED (26). One reconcile at a time per state
(RECONCILE_IN_PROGRESS, 27); a person's fleetkit sync holding the sync lock makes a pass wait for the next one.
The systemd unit fleetkit-reconcile.service (fleetkit gateway install --with-reconcile) runs it beside the gateway.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> --once',
    '<%= config.bin %> <%= command.id %> --parallel 3 --max-runs-per-hour 4 --interval 900',
    '<%= config.bin %> <%= command.id %> --once --no-drift-check --json',
    '<%= config.bin %> <%= command.id %> --clear',
  ]

  static override flags = {
    definition: definitionFlag(),
    'state-dir': stateDirFlag(),
    once: Flags.boolean({ summary: 'One pass, then exit (tests, cron); non-zero when it is stopped.' }),
    parallel: Flags.integer({
      summary: 'At most this many nodes per sync run after the canary.',
      env: 'FLEETKIT_RECONCILE_PARALLEL',
      default: 2,
      min: 1,
      max: 100,
    }),
    'max-runs-per-hour': Flags.integer({
      summary: 'At most this many sync runs (the canary run counts) start in any hour, counted from the ledger.',
      env: 'FLEETKIT_RECONCILE_MAX_RUNS_PER_HOUR',
      default: 6,
      min: 1,
      max: 1000,
    }),
    interval: Flags.integer({
      summary: 'Seconds between the end of a pass and the start of the next.',
      env: 'FLEETKIT_RECONCILE_INTERVAL_SECONDS',
      default: 600,
      min: 10,
      max: 86_400,
    }),
    'drift-check': Flags.boolean({
      summary: 'Run a drift check before each pass selects (default); --no-drift-check selects from the ledger alone.',
      allowNo: true,
      default: true,
    }),
    ...ansibleSpeedFlags(),
    'heartbeat-timeout': Flags.integer({
      summary: 'Seconds a node has to heartbeat after a repair reinstalled or restarted its agent (as fleetkit sync).',
      env: 'FLEETKIT_SYNC_HEARTBEAT_TIMEOUT_SECONDS',
      default: 120,
      min: 1,
      helpValue: 'SECONDS',
    }),
    clear: Flags.boolean({
      summary: 'Clear the stop a failed repair left (after fixing its cause), then exit; changes no host.',
      exclusive: ['once'],
    }),
  }

  async run(): Promise<ReconcileOutput> {
    const { flags } = await this.parse(Reconcile)
    const env = envWithStateDir(flags['state-dir'])
    const { runReconcile, passLine } = await import('../lifecycle/reconcile/reconcile.js')
    const { RECONCILE_ACTOR } = await import('../lifecycle/reconcile/reconcile-pass.js')
    const { clearReconcile, stoppedError } = await import('../lifecycle/reconcile/reconcile-stop.js')
    const { runSync } = await import('../sync/sync-run.js')
    const { readDefinitionFile, validateDefinitionText, definitionErrorsToFleetkitError } =
      await import('../definition/load.js')
    const { sleepUnlessAborted } = await import('../config/abortable-sleep.js')
    const result = await this.withState({ stateDir: flags['state-dir'], interruptible: true }, async (context) => {
      if (flags.clear) return clearReconcile({ pool: context.pool, actor: context.actor })
      const runtime = {
        ...(await syncRuntime(context, env, 'reconcile')),
        ...ansibleSpeedOptions(flags),
        heartbeatTimeoutSeconds: flags['heartbeat-timeout'],
        who: RECONCILE_ACTOR,
      }
      const run = (mode: 'apply' | 'drift', limit: readonly string[]) =>
        runSync({
          ...runtime,
          mode,
          definitionPath: flags.definition,
          limit: [...limit],
          full: true,
          report: (line) => this.log(`  ${line}`),
        })
      return runReconcile({
        pool: context.pool,
        clock: context.clock,
        signal: context.signal,
        sleep: sleepUnlessAborted,
        once: flags.once,
        intervalMs: flags.interval * 1000,
        parallel: flags.parallel,
        maxRunsPerHour: flags['max-runs-per-hour'],
        driftCheck: flags['drift-check'],
        loadDefinition: async () => {
          const text = await readDefinitionFile(flags.definition)
          const { definition, errors } = validateDefinitionText(text, flags.definition)
          if (errors.length > 0 || !definition) throw definitionErrorsToFleetkitError(flags.definition, errors)
          return { definition, text }
        },
        runner: { checkDrift: (nodes) => run('drift', nodes), sync: (nodes) => run('apply', nodes) },
        report: (line) => this.log(line),
        onPass: (pass) => this.log(passLine(pass)),
      })
    })
    if (!('last' in result)) {
      this.log(result.message)
      return result
    }
    if (flags.once && (result.last.outcome === 'stopped' || result.last.outcome === 'failed'))
      throw stoppedError(result.last)
    return result
  }
}
