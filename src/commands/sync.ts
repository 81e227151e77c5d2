// `fleetkit sync`: converge the fleet over SSH with ansible-playbook, the canary first, every node's
// state in the ledger (src/sync/sync-run.ts). Thin: flags in, runSync() out, a line per node.
import { Flags } from '@oclif/core'

import { ansibleSpeedFlags, ansibleSpeedOptions, definitionFlag, envWithStateDir, stateDirFlag } from '../cli/flags.js'
import { FleetkitCommand } from '../cli/fleetkit-command.js'
import type { StateContext } from '../cli/operator-context.js'
import type { Env } from '../config/state-dir.js'
import type { SyncOptions } from '../sync/run-context.js'
import type { SyncReport } from '../sync/sync-report.js'

/**
 * What every runSync call takes from the operator context and the environment beside its own run's
 * options: the state, who, the clock, the abort signal, progress, the harness settings and enrollment
 * (lifecycle's node-token.ts, wired here because sync and lifecycle are peers). `fleetkit reconcile` shares it;
 * COMMAND is the one a secret it issues is recorded as issued by.
 */
export async function syncRuntime(
  { pool, actor, clock, signal, progress }: Pick<StateContext, 'pool' | 'actor' | 'clock' | 'signal' | 'progress'>,
  env: Env,
  command: 'sync' | 'reconcile' = 'sync',
): Promise<Omit<SyncOptions, 'mode' | 'definitionPath'>> {
  const { issueNodeToken } = await import('../lifecycle/node/node-token.js')
  const { readGatewayCaBundle } = await import('../lifecycle/seed/seed-files.js')
  const { SYNC_SECRET_TTL_MS } = await import('../sync/enrollment.js')
  const { systemRng } = await import('../config/rng.js')
  return {
    // Test harnesses and bench/sync.ts only (docs/operations.md): not flags, never set in production.
    extraVarsFile: env.FLEETKIT_SYNC_EXTRA_VARS_FILE?.trim() || undefined,
    fingerprintVia: env.FLEETKIT_SYNC_FINGERPRINT_VIA === 'ansible' ? 'ansible' : 'ssh',
    env,
    who: actor,
    clock,
    pool,
    signal,
    progress,
    // Sync enrolls as `fleetkit node token` issues: the same function, a shorter lifetime.
    enrollment: {
      issueSecret: (nodeId, reissue, definition) =>
        issueNodeToken({
          pool,
          nodeId,
          reissue,
          ttlMs: SYNC_SECRET_TTL_MS,
          loadDefinition: () => Promise.resolve(definition),
          // Over SSH to the host its pinned key proves: the worker seed's own host, whose seed this does not replace.
          toPinnedHost: true,
          actor,
          // The secret's event names the command that issued it, not `node token`.
          via: command,
          clock,
          rng: systemRng,
        }),
      gatewayCa: () => readGatewayCaBundle(env),
    },
  }
}

export default class Sync extends FleetkitCommand<SyncReport> {
  static override summary =
    'Converge the fleet with Ansible over SSH: the canary first, then the rest; every node recorded in the ledger.'
  static override description = `Runs ansible/playbooks/site.yml over the inventory fleetkit renders (host keys pinned from the
definition and the state, StrictHostKeyChecking=yes), one ansible-playbook per phase: the canary alone, then every
other node. An unreachable canary hands its role to the next reachable node of its pool; a failed canary leaves every
other node not_attempted. Parked, retired, lost and disabled nodes, and nodes of a pool with a provider not
provisioned yet (no address), are skipped and listed. A node fleetkit provisioned is reached at its server's recorded
address; an ssh.host that differs refuses the run (NODE_ADDRESS_DISAGREES). One sync at a time per fleet.

Before any role each node must present its pinned host key to node-ssh (SSH_HOST_KEY_NOT_PINNED when none is pinned,
SSH_HOST_KEY_MISMATCH when it differs). After the agent role, a node whose agent holds no live certificate is enrolled:
a single-use secret (hash stored, 10 minutes) and the gateway CA (ca-bundle.pem of FLEETKIT_PKI_DIR) go over SFTP as
files, never on a command line, and its agent is restarted. A node is converged only once its agent heartbeats (within
--heartbeat-timeout, FLEETKIT_SYNC_HEARTBEAT_TIMEOUT_SECONDS, default 120; AGENT_NOT_HEARTBEATING otherwise). An enrolled node gets nothing.

Exit codes: 0 every node converged; 20 SYNC_CANARY_FAILED; 21 SYNC_PARTIAL_FAILURE (a node failed or its firewall
change rolled back); 22 SYNC_NODES_UNREACHABLE; 23 SYNC_IN_PROGRESS; 24 SYNC_PLAN_STALE; 2 a refused input
(SYNC_REF_INVALID, SYNC_RUN_UNKNOWN, SYNC_TARGET_UNKNOWN, SYNC_NO_TARGETS); 130/143 interrupted (resume it with --resume RUN).

Speed: SSH multiplexing (ControlPersist), pipelining, forks sized to the fleet and the controller's cores, a fact
cache, the free strategy (each host at its own pace; --strategy linear or FLEETKIT_SYNC_STRATEGY=linear for lock-step), through mitogen
when Debian's ansible-mitogen is installed (--no-mitogen or FLEETKIT_SYNC_MITOGEN=0 turn it off).
ANSIBLE_PRIVATE_KEY_FILE names the SSH key when it is not your default.

No-change fast path: after a full converge fleetkit records each node's fingerprint (a digest of every
file, unit, package, user, sysctl and module the roles manage, the live firewall table, the agent binary,
the host's release and size). A later sync with the same definition, roles and inventory reads the
fingerprint again in one call per node and skips the full run where it is unchanged; any difference runs
that node in full. --full, --tags, or a fingerprint older than a day run every node in full.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --dry-run',
    '<%= config.bin %> <%= command.id %> --ref 3f1c2e9a4b5d6e7f8091a2b3c4d5e6f708192a3b --plan-hash 9c41…',
    '<%= config.bin %> <%= command.id %> --limit build-1,build-2 --tags firewall',
    '<%= config.bin %> <%= command.id %> --resume 42 --json',
  ]

  static override flags = {
    definition: definitionFlag(),
    'state-dir': stateDirFlag(),
    ref: Flags.string({
      summary: 'Full commit SHA of the fleet repository: apply the definition as it is at that commit.',
      env: 'FLEETKIT_SYNC_REF',
    }),
    limit: Flags.string({ summary: 'Only these nodes (ids, comma-separated).', multiple: true, delimiter: ',' }),
    tags: Flags.string({
      summary: 'Only these roles (site.yml tags, comma-separated).',
      multiple: true,
      delimiter: ',',
    }),
    'dry-run': Flags.boolean({
      summary: 'Check mode with diff on every node: print what would change, the plan and its hash; change nothing.',
    }),
    'plan-hash': Flags.string({
      summary: 'Refuse to run unless the plan is still the one reviewed (the hash --dry-run printed).',
      env: 'FLEETKIT_SYNC_PLAN_HASH',
    }),
    resume: Flags.integer({
      summary:
        'Finish run RUN, cut off by a crash or Ctrl-C, with its own --limit and --tags: nodes that converged are not run again.',
      min: 1,
    }),
    full: Flags.boolean({
      summary: 'Run every role on every node, even where the fingerprint says nothing changed since the last converge.',
    }),
    ...ansibleSpeedFlags(),
    'heartbeat-timeout': Flags.integer({
      summary:
        'Seconds a node has to heartbeat after sync installed or enrolled its agent (AGENT_NOT_HEARTBEATING after).',
      env: 'FLEETKIT_SYNC_HEARTBEAT_TIMEOUT_SECONDS',
      default: 120,
      min: 1,
      helpValue: 'SECONDS',
    }),
  }

  async run(): Promise<SyncReport> {
    const { flags } = await this.parse(Sync)
    const env = envWithStateDir(flags['state-dir'])
    const { runSync } = await import('../sync/sync-run.js')
    const { outcomeError, formatNodeLine } = await import('../sync/sync-report.js')
    const check = flags['dry-run']
    const report = await this.withState({ stateDir: flags['state-dir'], interruptible: true }, async (context) =>
      runSync({
        ...(await syncRuntime(context, env)),
        mode: check ? 'dry-run' : 'apply',
        definitionPath: flags.definition,
        ref: flags.ref,
        limit: flags.limit,
        tags: flags.tags,
        planHash: flags['plan-hash'],
        resume: flags.resume,
        ...ansibleSpeedOptions(flags),
        heartbeatTimeoutSeconds: flags['heartbeat-timeout'],
        full: flags.full,
        report: (line) => this.log(line),
      }),
    )
    for (const n of report.nodes.filter((x) => x.state === 'not_attempted' || x.state === 'skipped'))
      this.log(formatNodeLine(n, check))
    const counts = Object.entries(report.counts)
      .map(([state, n]) => `${n} ${state.replace('_', ' ')}`)
      .join(', ')
    this.log(
      `Run ${report.runId} (${report.kind}${report.resumed ? ', resumed' : ''}): ${report.outcome}; ${counts}. Revision ${report.revision ?? 'uncommitted file'}.`,
    )
    if (check)
      this.log(
        `Plan ${report.planHash} (apply it with: fleetkit sync${report.revision ? ` --ref ${report.revision}` : ''} --plan-hash ${report.planHash})`,
      )
    const error = outcomeError(report)
    if (error) throw error
    return report
  }
}
