// What one sync run carries between its steps: the command's options and the run's plan, ledger
// row, files and speed settings (sync-run.ts builds it; run-steps.ts and sync-run.ts use it).
import type { StatePool } from '../store/transaction.js'

import type { Clock } from '../config/clock.js'
import type { Definition } from '../definition/types.js'
import type { Env } from '../config/state-dir.js'
import type { ManagedResource } from '../store/sync/node-fingerprints.js'
import type { SyncRunRow } from '../store/sync/sync-ledger.js'
import type { speedSettings } from './ansible-phase.js'
import type { FingerprintContext } from './fingerprint.js'
import type { NodeJudgement, TaskDifference } from './host-results.js'
import type { SyncPlan } from './plan.js'
import type { SshTarget } from './ssh-client.js'
import type { SyncMode } from './sync-report.js'

export interface SyncOptions {
  mode: SyncMode
  definitionPath: string
  ref?: string
  limit?: string[]
  tags?: string[]
  planHash?: string
  resume?: number
  noMitogen?: boolean
  /** Ansible's strategy: free (default, each host at its own pace) or linear (lock-step). */
  strategy?: 'free' | 'linear'
  /** How long a node's agent has to heartbeat after sync installed or enrolled it (default 120). */
  heartbeatTimeoutSeconds?: number
  /** Run every node in full even when its fingerprint is unchanged (src/sync/fingerprint.ts). */
  full?: boolean
  /**
   * A JSON or YAML file passed to every ansible-playbook as `-e @FILE`; its hash is part of the plan.
   * Test harnesses only (the container hosts' vars, a private mirror's CA): the command reads it.
   */
  extraVarsFile?: string
  /** How the no-change fast path reads fingerprints: over node-ssh (default) or one fingerprint.yml run (bench/sync.ts). */
  fingerprintVia?: 'ssh' | 'ansible'
  env: Env
  pool: StatePool
  signal?: AbortSignal
  /** A line per node as its state is known, and notes (the canary handed over, mitogen). */
  report?: (line: string) => void
  /** The task each phase is at (a terminal's progress line). */
  progress?: (message: string) => void
  /** `started_by`; defaults to user@host. */
  who?: string
  /** The controller's clock: fingerprint ages and canary proofs are judged and recorded on it (default: the system's). */
  clock?: Clock
  /** How the heartbeat wait sleeps between polls (default: a timer). */
  sleep?: (ms: number) => Promise<void>
  /**
   * How sync issues a node's enrollment secret and reads the gateway CA it hands over: lifecycle's
   * (node-token.ts, seed-files.ts), passed in by the command because sync and lifecycle are peers.
   * Without it an applying sync cannot enroll: a node whose agent is not heartbeating fails.
   */
  enrollment?: EnrollmentIssuer
  /**
   * Reads the gateway CA bundle (lifecycle's seed-files.ts, passed in as `enrollment` is): the inventory's
   * release CA when release.url is the gateway's enrollment listener (src/render/release-ca.ts).
   * Defaults to `enrollment.gatewayCa`.
   */
  gatewayCa?: () => Promise<string>
}

interface EnrollmentIssuer {
  /** A single-use secret for the node (hash stored, short lifetime); `reissue` for a node the state holds already. */
  issueSecret(
    nodeId: string,
    reissue: boolean,
    definition: Definition,
  ): Promise<{ secret: string; expiresAt: string; reissued: boolean }>
  /** The gateway CA bundle the agent pins. */
  gatewayCa(): Promise<string>
}

export interface RunContext {
  options: SyncOptions
  plan: SyncPlan
  run: SyncRunRow
  workDir: string
  inventoryPath: string
  extraVarsFile: string | undefined
  speed: ReturnType<typeof speedSettings>
  check: boolean
  /** options.clock, or the system's. */
  clock: Clock
  fingerprint: FingerprintContext
  /** The definition the plan was built from (an enrollment registers a declared node from it). */
  definition: Definition
  /** Every target's pinned SSH target: the host-key check, the fingerprint probe, the enrollment hand-off. */
  sshTargets: ReadonlyMap<string, SshTarget>
  /** Nodes refused before the run by the pinned host-key check, with their judgement: no phase runs them. */
  refused: Map<string, NodeJudgement>
  /** Nodes this run handed an enrollment secret to, whose agent then heartbeat. */
  enrolled: string[]
  /** Nodes a full run converged in this attempt, with what their tasks reported managing; and the others. */
  converged: Map<string, ManagedResource[]>
  notConverged: string[]
  /** Per node, what its changed tasks would change (check mode): the report's, never the ledger's. */
  differences: Map<string, TaskDifference[]>
}
