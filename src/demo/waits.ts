// The demo's one wait: poll a probe until it answers, failing with DEMO_STEP_FAILED when a process it
// depends on exited or the time is up, and ending at once when the demo is interrupted.
import { FleetkitError } from '../checks/fleetkit-error.js'
import { sleepUnlessAborted } from '../config/abortable-sleep.js'
import type { DemoProcess } from './processes.js'

export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false>,
  options: { signal: AbortSignal; timeoutMs: number; watch?: readonly DemoProcess[]; intervalMs?: number },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs
  for (;;) {
    if (options.signal.aborted) throw options.signal.reason
    const value = await probe()
    if (value !== undefined && value !== null && value !== false) return value
    const gone = options.watch?.find((p) => p.exited())
    if (gone) throw stepFailed(what, `${gone.name} exited (${gone.exited()!.code ?? gone.exited()!.signal})`, gone)
    if (Date.now() > deadline) throw stepFailed(what, `not within ${Math.round(options.timeoutMs / 1000)} s`)
    await sleepUnlessAborted(options.intervalMs ?? 250, options.signal)
  }
}

export function stepFailed(what: string, why: string, process?: DemoProcess): FleetkitError {
  const last = process?.tail().trim().split('\n').slice(-3).join(' | ').slice(0, 500)
  return new FleetkitError(
    'DEMO_STEP_FAILED',
    `the demo stopped waiting for ${what}: ${why}${last ? `; its last output: ${last}` : ''}`,
    {
      actions: ['fleetkit demo   (a second run starts clean)', 'fleetkit runbook DEMO_STEP_FAILED'],
      data: { step: what },
    },
  )
}
