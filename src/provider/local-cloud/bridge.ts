// The local cloud's network: a bridge it creates at start and deletes at the end, with this machine's address
// on it (where a gateway for the machines binds) and an address per server from the same subnet, handed out
// in order and taken back when the server is deleted. A bridge that already exists is refused, never
// adopted: it belongs to another stub, or to one killed before it cleaned up.
import { execFileSync } from 'node:child_process'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { run, runOk } from './run.js'

export interface BridgeOptions {
  /** The bridge's name (default fkcloud0; 15 characters at most). */
  name?: string
  /** This machine's address on it, the first of a /16 or /24 (default 10.232.0.1). */
  address?: string
  prefixLength?: 16 | 24
}

const DEFAULT_BRIDGE = { name: 'fkcloud0', address: '10.232.0.1', prefixLength: 16 } as const

export class CloudBridge {
  readonly name: string
  readonly address: string
  readonly prefixLength: 16 | 24
  private readonly held = new Set<string>()
  private created = false

  constructor(options: BridgeOptions = {}) {
    this.name = options.name ?? DEFAULT_BRIDGE.name
    this.address = options.address ?? DEFAULT_BRIDGE.address
    this.prefixLength = options.prefixLength ?? DEFAULT_BRIDGE.prefixLength
  }

  async create(): Promise<void> {
    if ((await run('ip', ['link', 'show', this.name])).code === 0) {
      throw new FleetkitError(
        'PROVIDER_STUB_BRIDGE_IN_USE',
        `the bridge ${this.name} already exists: another fleetkit provider stub --boot runs, or one was killed`,
        { actions: [`ip link delete ${this.name}   (when no stub runs)`], data: { bridge: this.name } },
      )
    }
    await runOk('ip', ['link', 'add', this.name, 'type', 'bridge'])
    this.created = true
    await runOk('ip', ['addr', 'add', `${this.address}/${this.prefixLength}`, 'dev', this.name])
    await runOk('ip', ['link', 'set', this.name, 'up'])
  }

  /** The next free address after the bridge's own. */
  allocate(): string {
    const parts = this.address.split('.').map(Number)
    const base = ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0
    const size = 2 ** (32 - this.prefixLength)
    const network = base - (base % size)
    for (let n = base + 1; n < network + size - 1; n++) {
      if (n % 256 === 0 || n % 256 === 255) continue
      const address = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.')
      if (this.held.has(address)) continue
      this.held.add(address)
      return address
    }
    throw new Error(`no free address left on the bridge ${this.name}`)
  }

  release(address: string): void {
    this.held.delete(address)
  }

  /** At process exit: the bridge deleted without awaiting. */
  removeSync(): void {
    if (!this.created) return
    this.created = false
    try {
      execFileSync('ip', ['link', 'delete', this.name], { stdio: 'ignore' })
    } catch {
      /* gone */
    }
  }

  /** Deletes the bridge (the machines' veths went with them). */
  async remove(): Promise<void> {
    if (!this.created) return
    this.created = false
    await run('ip', ['link', 'delete', this.name])
  }
}
