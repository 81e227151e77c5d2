// Polling until a condition holds or a deadline passes, with the clock and the sleep injected
// (tests drive it without waiting) and an abort signal for Ctrl-C.
import { sleepUnlessAborted } from '../config/abortable-sleep.js'
import type { Clock } from '../config/clock.js'

export interface WaitOptions {
  clock: Clock
  pollMs?: number
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>
  signal?: AbortSignal
}

export async function waitFor<T>(
  options: WaitOptions & { timeoutSeconds: number; probe: () => Promise<T>; done: (value: T) => boolean },
): Promise<{ done: boolean; value: T }> {
  const signal = options.signal ?? new AbortController().signal
  const sleep = options.sleep ?? sleepUnlessAborted
  const deadline = options.clock.now().getTime() + options.timeoutSeconds * 1000
  for (;;) {
    const value = await options.probe()
    if (options.done(value)) return { done: true, value }
    if (signal.aborted || options.clock.now().getTime() >= deadline) return { done: false, value }
    await sleep(options.pollMs ?? 500, signal)
  }
}
