// Fresh container hosts, booted ahead. A role suite declares the host it will take when its file
// loads (mocha loads every file before any hook runs); while one suite converges its host, the host
// the next declared suite will take boots and runs cloud-init. Every suite still gets a host nobody
// has touched (check -> converge -> idempotence keeps its meaning), and the boot is off the critical
// path. Why not one host shared and reset between suites: a container's reset is a boot on a new
// overlay, so it costs what a new host costs; and a host another role converged is not a fresh host.
//
// At most one host boots ahead. A host booted ahead for a suite that never takes it (a --grep that
// skips it, a failed `before`) is stopped with every other host by the root hook (test/hosts/mocha-hooks.ts).
import type { ContainerHost } from './types.js'

/** Starts one fresh host (startContainerHosts(1, options) in the suites; a fake in the pool's own test). */
export type HostStarter<O> = (options: O) => Promise<ContainerHost>

export class WarmPool<O> {
  private readonly declared: O[] = []
  private readonly ahead = new Map<number, Promise<ContainerHost>>()
  private readonly taken = new Set<number>()

  constructor(private readonly start: HostStarter<O>) {}

  /** A suite's host, declared when its file loads; the ticket is what `take` needs. */
  declare(options: O): number {
    this.declared.push(options)
    return this.declared.length - 1
  }

  /**
   * The host of `ticket`: the one booted ahead for it, else one started now. The next declared host
   * nobody has taken starts booting at once, as the caller's suite begins its work.
   */
  take(ticket: number): Promise<ContainerHost> {
    if (this.taken.has(ticket)) throw new Error(`the warm pool's host ${ticket} was taken twice`)
    this.taken.add(ticket)
    const host = this.ahead.get(ticket) ?? this.start(this.declared[ticket]!)
    this.ahead.delete(ticket)
    this.bootNext(ticket)
    return host
  }

  private bootNext(after: number): void {
    if (this.ahead.size > 0) return
    for (let next = after + 1; next < this.declared.length; next++) {
      if (this.taken.has(next)) continue
      const booting = this.start(this.declared[next]!)
      // A failed boot is reported to the suite that takes the host, not here.
      booting.catch(() => undefined)
      this.ahead.set(next, booting)
      return
    }
  }
}
