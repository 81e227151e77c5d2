// The base of every fleetkit command: --json on every command that reports, one error
// envelope ({code, message, exitCode, actions, data}) for all failures, and the operator context
// (actor, clock, abort signal, progress, the state database) handed to a command's work in one call.
import { Command, Errors, Flags, ux } from '@oclif/core'

import { FleetkitError, toFleetkitError } from '../checks/fleetkit-error.js'
import { systemClock } from '../config/clock.js'
import { actorOf } from './actor.js'
import { type Confirm, confirmer } from './confirm.js'
import { givenContextFlags, withContextFlags } from './context-flags.js'
import { type ErrorEnvelope, errorEnvelope, humanErrorLines } from './error-output.js'
import { type Interruption, interruptedExitCode, onInterrupt } from './interrupt.js'
import type {
  DeferredStateContext,
  OperatorContext,
  OperatorOptions,
  StateContext,
  StateOptions,
} from './operator-context.js'
import { createProgress, type Progress } from './progress.js'
import { streamSink } from './stdout-sink.js'
import { isParseError, usageError } from './usage-error.js'

export type { ErrorEnvelope } from './error-output.js'

export abstract class FleetkitCommand<T> extends Command {
  static override enableJsonFlag = true

  static override baseFlags = {
    debug: Flags.boolean({
      summary: 'Print the stack trace of an unexpected error.',
      helpGroup: 'GLOBAL',
      env: 'FLEETKIT_DEBUG',
    }),
  }

  private interruption: Interruption | undefined
  /** The progress of the running withOperator, ended before a question is asked. */
  private currentProgress: Progress | undefined

  /**
   * True when this command's --json output is a stream of one JSON object per line (a followed log):
   * then its last document, the result or the error envelope, is one line too.
   */
  protected jsonLines(): boolean {
    return false
  }

  abstract override run(): Promise<T>

  /**
   * From now until the command ends, Ctrl-C and SIGTERM abort the returned signal instead of
   * killing the process: pass it to the work, which cleans up and rejects; the command then exits 130/143.
   */
  protected interruptible(): AbortSignal {
    const graceMs = this.interruptGraceMs()
    this.interruption ??= onInterrupt(graceMs === undefined ? {} : { graceMs })
    return this.interruption.signal
  }

  /** How long the aborted work may clean up before the process exits regardless (undefined: interrupt.ts's 10 s). */
  protected interruptGraceMs(): number | undefined {
    return undefined
  }

  /**
   * Runs `work` with the operator context: who acts (actor.ts), the clock, the abort signal
   * (see OperatorOptions.interruptible) and a progress callback, whose steps are lines on a terminal
   * and nothing under --json; the last step ends as done, or as failed when `work` throws.
   * For work that needs no state; withState opens it too.
   */
  protected async withOperator<R>(
    options: OperatorOptions,
    work: (context: OperatorContext) => Promise<R>,
  ): Promise<R> {
    const signal = options.interruptible ? this.interruptible() : new AbortController().signal
    const progress = createProgress({ enabled: !this.jsonEnabled() })
    this.currentProgress = progress
    try {
      const result = await work({
        actor: actorOf(process.env),
        clock: systemClock,
        signal,
        progress: Object.assign((message: string) => progress.step(message), { done: () => progress.done() }),
      })
      progress.done()
      return result
    } catch (error) {
      progress.fail()
      throw error
    }
  }

  /**
   * withOperator with the state database: opened once (the embedded server started as a progress
   * step), its pool handed to `work`, closed whatever happens. The one way a command opens the state
   * (test/unit/lifecycle/pool-owner.test.ts).
   */
  protected async withState<R>(options: StateOptions, work: (context: StateContext) => Promise<R>): Promise<R> {
    return this.withDeferredState(options, ({ withPool, ...context }) =>
      withPool((pool, stateDir) => work({ ...context, pool, stateDir })),
    )
  }

  /**
   * withState whose database opens only when the work asks (`withPool`), at most once per call of it:
   * for a command that checks everything that can fail before it may start a server.
   */
  protected async withDeferredState<R>(
    options: StateOptions,
    work: (context: DeferredStateContext) => Promise<R>,
  ): Promise<R> {
    // Loaded here, not at the top of the module: a command that needs no state, and `fleetkit --help`, never load pg.
    const { withDatabase } = await import('./with-database.js')
    return this.withOperator(options, (context) =>
      work({
        ...context,
        withPool: (inner) =>
          withDatabase(
            {
              stateDir: options.stateDir,
              progress: context.progress,
              ...(options.schema ? { schema: options.schema } : {}),
              ...(options.embedded ? { embedded: options.embedded } : {}),
            },
            inner,
          ),
      }),
    )
  }

  /**
   * The confirmation of an irreversible step (src/cli/confirm.ts): asks on a terminal unless `yes`;
   * without a terminal, or under --json, refuses unless `yes`. Ctrl-C while asking ends the command,
   * with nothing changed.
   */
  protected confirmation(yes: boolean): Confirm {
    return confirmer({
      yes,
      json: this.jsonEnabled(),
      // A command that made itself interruptible gets Ctrl-C as an abort; any other dies of it, which is as good.
      ...(this.interruption ? { signal: this.interruption.signal } : {}),
      beforeAsk: () => this.currentProgress?.done(),
    })
  }

  override async finally(error: Error | undefined): Promise<unknown> {
    this.interruption?.dispose()
    return super.finally(error)
  }

  protected override toSuccessJson(result: T): { status: 0; result: T } {
    return { status: 0, result }
  }

  protected override toErrorJson(error: unknown): ErrorEnvelope {
    const e = this.toOperatorError(error)
    return errorEnvelope(e, interruptedExitCode(e) ?? e.exitCode)
  }

  override async catch(error: Error & { exitCode?: number }): Promise<void> {
    if (error instanceof Errors.ExitError) {
      process.exitCode = error.oclif.exit
      return
    }
    // The command did call parse(); it was the command line that failed. Without this, oclif
    // warns in development that the command "did not parse its arguments".
    if (isParseError(error)) this.parsed = true
    const e = this.toOperatorError(error)
    const exitCode = interruptedExitCode(e) ?? e.exitCode
    process.exitCode = exitCode
    // Standard output is what failed: the envelope would go where nothing can be read, so stderr says it.
    if (this.jsonEnabled() && !isStdoutFailure(e)) {
      this.logJson(errorEnvelope(e, exitCode))
      return
    }
    const debug = this.argv.includes('--debug') || Boolean(process.env.FLEETKIT_DEBUG)
    for (const line of humanErrorLines(e, debug)) process.stderr.write(`${line}\n`)
  }

  /**
   * The --json document, written through a sink that sees a closed pipe or a full disk. A success
   * document is printed after the command's change committed, so a failed write cannot undo it:
   * stderr says so with its code (never silently), and the exit status is not 0.
   */
  override logJson(json: unknown): void {
    const text = this.jsonLines()
      ? `${JSON.stringify(json)}\n`
      : `${ux.colorizeJson(json, { pretty: true, theme: this.config.theme?.json })}\n`
    const success = (json as { status?: unknown } | null)?.status === 0
    streamSink(process.stdout)(text).catch((error: unknown) => {
      if (!success) return
      const e = reportLost(error, this.id ?? 'fleetkit')
      process.exitCode = e.exitCode
      for (const line of humanErrorLines(e, false)) process.stderr.write(`${line}\n`)
    })
  }

  private toOperatorError(error: unknown): FleetkitError {
    const e = usageError(error, this.id) ?? toFleetkitError(error)
    this.carryContextFlags(e)
    return e
  }

  /**
   * Adds the --state-dir, --definition and --pki-dir given on this command line to the error's next
   * commands that take them (src/cli/context-flags.ts). Idempotent: a flag already named is not added.
   */
  private carryContextFlags(e: FleetkitError): void {
    const given = givenContextFlags(this.argv, this.ctor.flags ?? {})
    if (given.length === 0) return
    const flagsOf = (id: string) => this.config.findCommand(id)?.flags
    e.actions.splice(0, e.actions.length, ...e.actions.map((action) => withContextFlags(action, given, flagsOf)))
  }
}

/** An output failure on standard output (data.path "-"): reported on stderr even under --json. */
function isStdoutFailure(e: FleetkitError): boolean {
  return e.code === 'OUTPUT_WRITE_FAILED' && e.data?.path === '-'
}

function reportLost(error: unknown, commandId: string): FleetkitError {
  const errno = (error as NodeJS.ErrnoException | undefined)?.code ?? 'EIO'
  return new FleetkitError(
    'OUTPUT_WRITE_FAILED',
    `could not write the --json result to standard output (${errno}); what the command did is done (committed), only its report was lost`,
    {
      actions: [
        'fleetkit events --since 15m   (what changed)',
        `fleetkit ${commandId.replaceAll(':', ' ')} ... --json with stdout read to the end`,
      ],
      data: { path: '-', errno, committed: true },
      cause: error,
    },
  )
}
