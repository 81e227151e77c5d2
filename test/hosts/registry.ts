// Every host this process started, so that a failed test, a forgotten stop() or Ctrl-C still
// stops them: the mocha root hook calls stopAllHosts(); process exit runs each host's sync cleanup.
export interface Registered {
  name: string
  /** Stops the host and removes what it left (async, the normal path). */
  stop(): Promise<void>
  /** The last resort at process exit: SIGKILL by PID and synchronous cleanup only. */
  killSync(): void
}

const hosts = new Map<string, Registered>()
const extraCleanups = new Map<string, () => void>()
let installed = false

function installExitHandlers(): void {
  if (installed) return
  installed = true
  process.on('exit', () => {
    for (const host of hosts.values()) {
      try {
        host.killSync()
      } catch {
        /* keep cleaning up the others */
      }
    }
    for (const cleanup of extraCleanups.values()) {
      try {
        cleanup()
      } catch {
        /* keep cleaning up the others */
      }
    }
  })
  // Ctrl-C or a CI timeout: run the exit path (which kills by PID) instead of dying with hosts running.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => process.exit(130))
  }
}

export function registerHost(host: Registered): void {
  installExitHandlers()
  hosts.set(host.name, host)
}

export function unregisterHost(name: string): void {
  hosts.delete(name)
}

/** A process-wide resource (the stranger namespace) that must go at exit. */
export function registerCleanup(name: string, cleanup: () => void): void {
  installExitHandlers()
  extraCleanups.set(name, cleanup)
}

export function unregisterCleanup(name: string): void {
  extraCleanups.delete(name)
}

export function runningHosts(): string[] {
  return [...hosts.keys()]
}

/** Stops every host this process started and has not stopped yet (mocha root hook, `after` hooks). */
export async function stopAllHosts(): Promise<void> {
  const results = await Promise.allSettled([...hosts.values()].map((host) => host.stop()))
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failed.length > 0)
    throw new Error(`test hosts: could not stop every host: ${failed.map((f) => String(f.reason)).join('; ')}`)
}
