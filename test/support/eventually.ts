// eventually(): the one way a test waits for something a real process does (a heartbeat, a
// log line, a row): poll a probe until it gives a value, a stop condition fires or time runs out.

export interface EventuallyOptions {
  /** How long to wait in all (default 20 s). */
  timeoutMs?: number
  /** Pause between probes (default 200 ms). */
  intervalMs?: number
  /** Checked before each probe: a reason to give up at once (e.g. "the agent exited (1)"). */
  stop?: () => string | undefined
  /** Injected in the helper's own tests so they run without waiting. */
  now?: () => number
  sleep?: (ms: number) => Promise<void>
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Resolves with the first value `probe` gives that is neither `undefined` nor `false`.
 * Rejects naming `what` when `stop` gives a reason or the time is up (with the probe's last error, if any).
 */
export async function eventually<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: EventuallyOptions = {},
): Promise<T> {
  const now = options.now ?? Date.now
  const sleep = options.sleep ?? realSleep
  const deadline = now() + (options.timeoutMs ?? 20_000)
  let lastError: unknown
  for (;;) {
    const stopped = options.stop?.()
    if (stopped) throw new Error(`${stopped} while waiting for ${what}`)
    try {
      const value = await probe()
      if (value !== undefined && value !== false) return value
      lastError = undefined
    } catch (error) {
      // A probe may fail while the thing it waits for is not there yet (a refused connection).
      lastError = error
    }
    if (now() >= deadline) {
      const why = lastError === undefined ? '' : ` (last probe: ${(lastError as Error).message ?? String(lastError)})`
      throw new Error(`timed out waiting for ${what}${why}`)
    }
    await sleep(options.intervalMs ?? 200)
  }
}
