// The error an operator can act on: a registered code, one line of text, the next
// commands to run, and structured data that is safe to print (never a secret).
import { environmentFailure } from './environment-failures.js'
import { type FailureCode, failureCodeSpec, isFailureCode } from './failure-codes.js'

export interface FleetkitErrorOptions {
  /** Commands to run next; `fleetkit runbook CODE` is always added last. */
  actions?: string[]
  /** Structured details for --json (for example `{expected, actual}`); must hold no secret. */
  data?: Record<string, unknown>
  /** Lines printed before the error line in human mode (for example one per validation error). */
  detailLines?: string[]
  cause?: unknown
}

/** A brand that survives two copies of this module (tsx and dist, or a test's dynamic import). */
const BRAND = Symbol.for('fleetkit.FleetkitError')

export class FleetkitError extends Error {
  readonly [BRAND] = true
  readonly code: FailureCode
  readonly actions: string[]
  readonly data: Record<string, unknown> | undefined
  readonly detailLines: string[]
  readonly exitCode: number

  constructor(code: FailureCode, message: string, options: FleetkitErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'FleetkitError'
    this.code = code
    this.actions = [...(options.actions ?? []), `fleetkit runbook ${code}`]
    this.data = options.data
    this.detailLines = options.detailLines ?? []
    this.exitCode = failureCodeSpec(code).exitCode ?? 1
  }
}

export function isFleetkitError(error: unknown): error is FleetkitError {
  return (
    error instanceof FleetkitError ||
    (error instanceof Error && (error as unknown as Record<symbol, unknown>)[BRAND] === true)
  )
}

/**
 * Turn anything thrown into a FleetkitError. oclif's parse errors become
 * USAGE_INVALID; an error carrying a registered `code` keeps it; everything else
 * is a bug (INTERNAL_ERROR) whose message is kept but whose stack needs --debug, unless it says the
 * environment failed (environment-failures.ts: a full disk, a database failing).
 */
export function toFleetkitError(error: unknown): FleetkitError {
  if (isFleetkitError(error)) return error
  if (error instanceof Error) {
    const oclif = (error as { oclif?: { exit?: number } }).oclif
    const code = (error as { code?: unknown }).code
    if (typeof code === 'string' && isFailureCode(code)) return new FleetkitError(code, error.message, { cause: error })
    if (
      oclif !== undefined ||
      error.name === 'CLIError' ||
      /^(Unexpected argument|Missing required|Expected --|Nonexistent flag|Parsing --)/.test(error.message)
    ) {
      return new FleetkitError('USAGE_INVALID', firstLine(error.message), { actions: ['fleetkit help'], cause: error })
    }
    const environment = environmentFailure(error)
    if (environment)
      return new FleetkitError(environment.code, environment.message, {
        actions: environment.actions,
        data: environment.data,
        cause: error,
      })
    return new FleetkitError('INTERNAL_ERROR', firstLine(error.message), {
      actions: ['re-run with --debug and report the stack trace'],
      cause: error,
    })
  }
  return new FleetkitError('INTERNAL_ERROR', String(error))
}

function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim() ?? 'no message'
  )
}
