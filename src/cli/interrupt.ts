// Ctrl-C and SIGTERM during a long command: abort its work through an AbortSignal, so the
// library removes its temporary files and ends its child processes, then exit 130 or 143.
import { FleetkitError, isFleetkitError } from '../checks/fleetkit-error.js'

export type StopSignal = 'SIGINT' | 'SIGTERM'

/** The shell's convention: 128 + the signal's number. */
const SIGNAL_EXIT_CODES: Record<StopSignal, number> = { SIGINT: 130, SIGTERM: 143 }

export interface SignalSource {
  on(event: StopSignal, listener: () => void): unknown
  off(event: StopSignal, listener: () => void): unknown
  exit(code: number): never
}

export interface InterruptOptions {
  process?: SignalSource
  /** How long the aborted work may take to clean up before the process exits regardless. */
  graceMs?: number
}

export interface Interruption {
  readonly signal: AbortSignal
  dispose(): void
}

function interruptedError(signal: StopSignal): FleetkitError {
  return new FleetkitError(
    'COMMAND_INTERRUPTED',
    `stopped by ${signal}; temporary files were removed and child processes ended`,
    {
      actions: ['run the same command again'],
      data: { signal },
    },
  )
}

/** The exit code of a COMMAND_INTERRUPTED error (130 or 143); undefined for any other error. */
export function interruptedExitCode(error: unknown): number | undefined {
  if (!isFleetkitError(error) || error.code !== 'COMMAND_INTERRUPTED') return undefined
  const signal = error.data?.signal
  return signal === 'SIGTERM' || signal === 'SIGINT' ? SIGNAL_EXIT_CODES[signal] : error.exitCode
}

/**
 * Listens for SIGINT and SIGTERM until disposed. The first aborts `signal` with a COMMAND_INTERRUPTED
 * error; a second, or work that ignores the abort for `graceMs`, exits at once with the code.
 */
export function onInterrupt(options: InterruptOptions = {}): Interruption {
  const proc = options.process ?? (process as unknown as SignalSource)
  const controller = new AbortController()
  let grace: NodeJS.Timeout | undefined
  const handlers = new Map<StopSignal, () => void>()
  for (const name of ['SIGINT', 'SIGTERM'] as const) {
    const handler = () => {
      if (controller.signal.aborted) {
        proc.exit(SIGNAL_EXIT_CODES[name])
        return
      }
      controller.abort(interruptedError(name))
      grace = setTimeout(() => proc.exit(SIGNAL_EXIT_CODES[name]), options.graceMs ?? 10_000)
      grace.unref()
    }
    handlers.set(name, handler)
    proc.on(name, handler)
  }
  return {
    signal: controller.signal,
    dispose() {
      for (const [name, handler] of handlers) proc.off(name, handler)
      handlers.clear()
      if (grace) clearTimeout(grace)
    },
  }
}
