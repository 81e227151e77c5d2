// The base of every fleetkit command: --json on every command that reports,
// and one error envelope ({code, message, exitCode, actions, data}) for all failures.
import { Command, Errors, Flags } from '@oclif/core'

import { type FleetkitError, toFleetkitError } from '../checks/fleetkit-error.js'

export interface ErrorEnvelope {
  status: number
  code: string
  message: string
  exitCode: number
  actions: string[]
  data?: Record<string, unknown>
}

export abstract class FleetkitCommand<T> extends Command {
  static override enableJsonFlag = true

  static override baseFlags = {
    debug: Flags.boolean({
      summary: 'Print the stack trace of an unexpected error.',
      helpGroup: 'GLOBAL',
      env: 'FLEETKIT_DEBUG',
    }),
  }

  abstract override run(): Promise<T>

  protected override toSuccessJson(result: T): { status: 0; result: T } {
    return { status: 0, result }
  }

  protected override toErrorJson(error: unknown): ErrorEnvelope {
    const e = toFleetkitError(error)
    return {
      status: e.exitCode,
      code: e.code,
      message: e.message,
      exitCode: e.exitCode,
      actions: e.actions,
      ...(e.data === undefined ? {} : { data: e.data }),
    }
  }

  override async catch(error: Error & { exitCode?: number }): Promise<void> {
    if (error instanceof Errors.ExitError) {
      process.exitCode = error.oclif.exit
      return
    }
    const e = toFleetkitError(error)
    process.exitCode = e.exitCode
    if (this.jsonEnabled()) {
      this.logJson(this.toErrorJson(e))
      return
    }
    this.printHumanError(e)
  }

  private printHumanError(e: FleetkitError): void {
    const out = (line: string) => process.stderr.write(`${line}\n`)
    for (const line of e.detailLines) out(line)
    out(`Error (${e.code}): ${e.message}`)
    out('Try this:')
    for (const action of e.actions) out(`  ${action}`)
    if (this.argv.includes('--debug') || process.env.FLEETKIT_DEBUG) {
      const cause = e.cause instanceof Error ? e.cause : e
      out(cause.stack ?? String(cause))
    }
  }
}
