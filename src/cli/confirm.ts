// The y/N question an irreversible command asks before it acts: on a terminal (stdin and stderr
// both TTYs, no --json) it asks; anywhere else it needs --yes, so a script never hangs on a prompt.
import { FleetkitError } from '../checks/fleetkit-error.js'
import type { FailureCode } from '../checks/failure-codes.js'
import { shownOnTerminal } from '../protocol/terminal-text.js'

/** What a command is about to do that cannot be undone, as the library describes it. */
export interface ConfirmationRequest {
  /**
   * What is lost, naming the node: "retire build-01 (draining): its certificates are revoked and
   * its id can never be enrolled again". Used in the question and in the refusal.
   */
  what: string
  /** The command again with --yes, for a script: the refusal's next step. */
  command: string
  /** The refusal's code when nobody can be asked; CONFIRMATION_REQUIRED unless the library has a more precise one. */
  code?: FailureCode
  data?: Record<string, unknown>
}

export type Confirm = (request: ConfirmationRequest) => Promise<void>

export interface PromptStreams {
  input: NodeJS.ReadableStream & { isTTY?: boolean }
  output: NodeJS.WritableStream & { isTTY?: boolean }
}

export interface ConfirmOptions {
  /** --yes: confirmed beforehand, nothing is asked. */
  yes: boolean
  /** --json: a machine reads the output, so nobody is asked. */
  json: boolean
  /** Defaults to stdin and stderr (stdout may be a pipe carrying the result). */
  streams?: PromptStreams
  /** Ctrl-C while asking: rejects with the signal's reason. */
  signal?: AbortSignal
  /** Called once before the question is written: a progress line redrawn in place would overwrite it. */
  beforeAsk?: () => void
}

/** The refusal when nobody can be asked and the library named no code of its own. */
const NOT_CONFIRMED = { code: 'CONFIRMATION_REQUIRED' } as const

/** A Confirm for one command run: resolves when confirmed, else throws a coded error and nothing is done. */
export function confirmer(options: ConfirmOptions): Confirm {
  return async (request) => {
    if (options.yes) return
    const { input, output } = options.streams ?? { input: process.stdin, output: process.stderr }
    const why = options.json
      ? '--json never asks'
      : input.isTTY !== true || output.isTTY !== true
        ? 'there is no terminal to ask on'
        : undefined
    if (why !== undefined) {
      throw new FleetkitError(
        request.code ?? NOT_CONFIRMED.code,
        `${request.what}; ${why}, so it needs --yes; nothing changed`,
        {
          actions: [request.command],
          data: { ...request.data, confirmed: false, reason: options.json ? 'json' : 'no_terminal' },
        },
      )
    }
    options.beforeAsk?.()
    // WHAT may name stored text (an allocation's owner): escaped like any echoed text (terminal-text.ts).
    output.write(`${shownOnTerminal(capitalized(request.what))}.\nContinue? [y/N] `)
    const answer = await readAnswer(input, options.signal)
    if (answer === undefined) output.write('\n')
    if (answer !== undefined && /^\s*y(es)?\s*$/i.test(answer)) return
    throw new FleetkitError(
      'CONFIRMATION_DECLINED',
      `not confirmed (${answer === undefined ? 'no answer' : 'answered no'}): did not ${request.what}; nothing changed`,
      {
        actions: [request.command],
        data: { ...request.data, confirmed: false, reason: answer === undefined ? 'no_answer' : 'declined' },
      },
    )
  }
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}

/** One line from `input`, without its newline; undefined at the end of input before a line. */
function readAnswer(input: NodeJS.ReadableStream, signal: AbortSignal | undefined): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    let buffer = ''
    const finish = (settle: () => void) => {
      input.off('data', onData)
      input.off('end', onEnd)
      input.off('error', onError)
      signal?.removeEventListener('abort', onAbort)
      // A paused stdin no longer keeps the process alive once the command is done.
      input.pause()
      settle()
    }
    const onData = (chunk: Buffer | string) => {
      buffer += chunk.toString()
      const end = buffer.indexOf('\n')
      if (end >= 0) finish(() => resolve(buffer.slice(0, end).replace(/\r$/, '')))
    }
    const onEnd = () => finish(() => resolve(buffer === '' ? undefined : buffer))
    const onError = (error: Error) => finish(() => reject(error))
    const onAbort = () => finish(() => reject(signal!.reason))
    if (signal?.aborted) return reject(signal.reason)
    input.on('data', onData)
    input.once('end', onEnd)
    input.once('error', onError)
    signal?.addEventListener('abort', onAbort, { once: true })
    input.resume()
  })
}
