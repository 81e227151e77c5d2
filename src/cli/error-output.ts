// How a failure reaches the operator, the same from a command and from an oclif hook:
// the --json envelope on stdout, or `Error (CODE): message` and "Try this:" on stderr.
import type { FleetkitError } from '../checks/fleetkit-error.js'
import { shownOnTerminal } from '../protocol/terminal-text.js'

export interface ErrorEnvelope {
  /**
   * @minimum 1
   * @asType integer
   */
  status: number
  /** @pattern ^[A-Z][A-Z0-9_]+$ */
  code: string
  /** @minLength 1 */
  message: string
  /**
   * @minimum 1
   * @asType integer
   */
  exitCode: number
  actions: string[]
  data?: Record<string, unknown>
}

/** `exitCode` overrides the code's own (an interruption exits 128 + the signal's number). */
export function errorEnvelope(e: FleetkitError, exitCode: number = e.exitCode): ErrorEnvelope {
  return {
    status: exitCode,
    code: e.code,
    message: e.message,
    exitCode,
    actions: e.actions,
    ...(e.data === undefined ? {} : { data: e.data }),
  }
}

/**
 * The failure as terminal lines. Messages, details and actions echo what the operator typed, what a definition
 * file holds and what a server answered: each line is shownOnTerminal, so none of it can move the cursor, start a
 * line of its own or turn the text around it (the --json envelope keeps it as it is, escaped as JSON escapes).
 */
export function humanErrorLines(e: FleetkitError, debug: boolean): string[] {
  const lines = [...e.detailLines, `Error (${e.code}): ${e.message}`, 'Try this:', ...e.actions.map((a) => `  ${a}`)]
  if (debug) {
    const cause = e.cause instanceof Error ? e.cause : e
    // The stack's own line breaks are kept; only what is inside a line is escaped.
    lines.push(...(cause.stack ?? String(cause)).split('\n'))
  }
  return lines.map(shownOnTerminal)
}

export interface ErrorOutputOptions {
  json: boolean
  debug: boolean
  exitCode?: number
  stdout?: Pick<NodeJS.WriteStream, 'write'>
  stderr?: Pick<NodeJS.WriteStream, 'write'>
}

/** Writes the failure and sets the process's exit code; used where no oclif command object exists. */
export function reportError(e: FleetkitError, options: ErrorOutputOptions): void {
  const exitCode = options.exitCode ?? e.exitCode
  process.exitCode = exitCode
  if (options.json) {
    ;(options.stdout ?? process.stdout).write(`${JSON.stringify(errorEnvelope(e, exitCode), null, 2)}\n`)
    return
  }
  const stderr = options.stderr ?? process.stderr
  for (const line of humanErrorLines(e, options.debug)) stderr.write(`${line}\n`)
}
