// A sleep that an AbortSignal ends early (resolving, not rejecting), so a loop that waits
// between polls stops at once on shutdown or Ctrl-C. Shared by the agent and the CLI.
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, Math.max(ms, 0))
    signal.addEventListener('abort', done, { once: true })
  })
}
