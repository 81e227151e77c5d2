// What one sync run carries between its steps: the command's options and the run's plan, ledger
// row, files and speed settings (sync-run.ts builds it; run-steps.ts and sync-run.ts use it).
import type pg from 'pg'

import type { Clock } from '../config/clock.js'
import type { Env } from '../config/state-dir.js'
import type { ManagedResource } from '../store/node-fingerprints.js'
import type { SyncRunRow } from '../store/sync-ledger.js'
import type { speedSettings } from './ansible-phase.js'
import type { FingerprintContext } from './fingerprint.js'
import type { SyncPlan } from './plan.js'
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
  /** Run every node in full even when its fingerprint is unchanged (src/sync/fingerprint.ts). */
  full?: boolean
  env: Env
  pool: pg.Pool
  signal?: AbortSignal
  /** A line per node as its state is known, and notes (the canary handed over, mitogen). */
  report?: (line: string) => void
  /** The task each phase is at (a terminal's progress line). */
  progress?: (message: string) => void
  /** `started_by`; defaults to user@host. */
  who?: string
  /** The controller's clock: fingerprint ages and canary proofs are judged and recorded on it (default: the system's). */
  clock?: Clock
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
  /** Nodes a full run converged in this attempt, with what their tasks reported managing; and the others. */
  converged: Map<string, ManagedResource[]>
  notConverged: string[]
}
