// What the base command hands a command's work in one call (FleetkitCommand's withOperator and
// withState): who acts, the clock, the abort signal, the progress of its steps and the state's pool.
import type { StatePool } from '../store/transaction.js'

import type { Clock } from '../config/clock.js'

/** A library's `progress?: (message) => void`: each message starts a step line on a terminal. */
interface StepProgress {
  (message: string): void
  /** Ends the current step as done now, before the work writes lines of its own (ca rotate --wait). */
  done(): void
}

export interface OperatorContext {
  /** Who runs the command, for events and ledgers (actor.ts: FLEETKIT_ACTOR, else user@host). */
  actor: string
  clock: Clock
  /** Aborted by Ctrl-C or SIGTERM when the command asked to be `interruptible`; otherwise never. */
  signal: AbortSignal
  /** Step lines on a terminal, nothing under --json or in a pipe; the last step ends with the work. */
  progress: StepProgress
}

export interface OperatorOptions {
  /**
   * Ctrl-C and SIGTERM abort `signal` instead of killing the process: for work that cleans up
   * (ends its child processes, withdraws a job) and rejects; the command then exits 130 or 143.
   */
  interruptible?: boolean
}

export interface StateOptions extends OperatorOptions {
  /** --state-dir as given. */
  stateDir: string | undefined
  /** `none`: connect without checking or migrating the schema (db backup and restore judge it). */
  schema?: 'none'
  /** `restarts`: the embedded server only, restarted by the work on purpose (db archive). */
  embedded?: 'restarts'
}

export interface StateContext extends OperatorContext {
  /** The state database, opened once for this command and closed when its work ends. */
  pool: StatePool
  /** The state directory: --state-dir, else FLEETKIT_STATE_DIR, else the default. */
  stateDir: string
}

export interface DeferredStateContext extends OperatorContext {
  /**
   * Opens the state database (starting the embedded server) only when called, for work that must
   * judge its input first: a refused `db restore FILE` starts no server and creates nothing.
   */
  withPool<T>(work: (pool: StatePool, stateDir: string) => Promise<T>): Promise<T>
}
