// The local cloud: the real machines behind `fleetkit provider stub --boot` (StubMachines). It owns a bridge,
// a folder for the machines' upper layers and the volumes' files, the images (built once into the cache),
// one systemd-nspawn machine per server and a loop device per volume, and it stops and removes all of them
// when it closes: on Ctrl-C, SIGTERM or the stub's end nothing is left running or attached.
import { rmSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import type { MachineServer, PowerOperation, StubMachines } from '../stub-machines.js'
import { type BridgeOptions, CloudBridge } from './bridge.js'
import { assertLocalCloudHost } from './host-tools.js'
import { ImageCache, imageCacheDir } from './image-cache.js'
import { LOCAL_CLOUD_RELEASES } from './image-recipe.js'
import { claimRunDir, removeDeadRuns, RUN_DIR_PREFIX } from './leftovers.js'
import { LoopVolumes } from './loop-volumes.js'
import { Machine } from './machine.js'
import { seedUserData } from './user-data.js'

export interface LocalCloudOptions {
  bridge?: BridgeOptions
  /** Where images are built and kept (default: FLEETKIT_LOCAL_CLOUD_CACHE, else /var/cache/fleetkit/local-cloud). */
  cacheDir?: string
  /** Ready root filesystems by image name instead of building them (a test's cached golden rootfs). */
  prebuiltImages?: Readonly<Record<string, string>>
  /** Progress lines (image builds). */
  log?: (line: string) => void
  /** Stops an image build under way (Ctrl-C). */
  signal?: AbortSignal
}

/** One thing the cloud did to a machine, in order: what its own test reads ("deleted exactly once"). */
export interface MachineEvent {
  serverId: number
  event: 'boot' | PowerOperation | 'delete' | 'attach' | 'detach'
  volumeId?: number
}

/** A server's machine: made once its image is ready (`booted` settles after), its address from the create. */
interface MachineEntry {
  machine?: Machine
  address: string
  booted: Promise<void>
}

/**
 * nspawn's name of a server's machine: `fk`, the stub's PID (a test finds its own machines by it) and the server's
 * ID, in base 36, 12 characters at most (its veth is vb-NAME, and an interface name holds 15). The ID's last five
 * digits tell a run's servers apart: IDs count up from the stub's start (stub-api.ts).
 */
export function machineNameOf(stubPid: number, serverId: number): string {
  return `fk${stubPid.toString(36)}${(serverId % 36 ** 5).toString(36)}`.slice(0, 12)
}

export class LocalCloud implements StubMachines {
  readonly events: MachineEvent[] = []
  private readonly machines = new Map<number, MachineEntry>()
  private readonly volumes: LoopVolumes
  private closed = false
  /** A process that ends before close() (a second Ctrl-C, an uncaught error) still leaves nothing behind. */
  private readonly atExit = () => this.killSync()

  private constructor(
    readonly bridge: CloudBridge,
    /** The machines' upper layers and the volumes' files: removed when the cloud closes. */
    readonly dir: string,
    private readonly images: ImageCache,
  ) {
    this.volumes = new LoopVolumes(dir)
    process.on('exit', this.atExit)
  }

  /** Checks the machine (root, tools), then makes the bridge and the run folder. */
  static async start(options: LocalCloudOptions = {}): Promise<LocalCloud> {
    assertLocalCloudHost()
    const bridge = new CloudBridge(options.bridge)
    // A stub killed with SIGKILL could not clean up: its machines, loop devices, folder and bridge go first.
    await removeDeadRuns({ tmp: tmpdir(), ...(options.log ? { log: options.log } : {}) })
    await bridge.create()
    try {
      const dir = await mkdtemp(join(tmpdir(), RUN_DIR_PREFIX))
      await claimRunDir(dir, bridge.name)
      const images = new ImageCache({
        cacheDir: options.cacheDir ?? imageCacheDir(),
        ...(options.prebuiltImages ? { prebuilt: options.prebuiltImages } : {}),
        ...(options.log ? { log: options.log } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      })
      return new LocalCloud(bridge, dir, images)
    } catch (error) {
      await bridge.remove()
      throw error
    }
  }

  /** Builds (or finds) an image ahead of the first create: a create then boots in seconds. */
  prepareImage(name: string): Promise<string> {
    return this.images.rootfs(name)
  }

  /** Every loop device the cloud holds now. */
  loopDevices(): string[] {
    return this.volumes.devices()
  }

  bootsImage(name: string): boolean {
    return name in LOCAL_CLOUD_RELEASES
  }

  createServer(server: MachineServer): { ipv4: string; booted: Promise<void> } {
    const address = this.bridge.allocate()
    const entry: MachineEntry = { address, booted: Promise.resolve() }
    this.machines.set(server.id, entry)
    entry.booted = (async () => {
      const rootfs = await this.images.rootfs(server.image)
      if (this.closed || this.machines.get(server.id) !== entry)
        throw new Error('the server was deleted before it booted')
      const machine = new Machine({
        serverId: server.id,
        name: server.name,
        machineName: machineNameOf(process.pid, server.id),
        rootfs,
        dir: join(this.dir, `server-${server.id}`),
        address,
        prefixLength: this.bridge.prefixLength,
        gateway: this.bridge.address,
        bridge: this.bridge.name,
        userData: seedUserData(server.userData),
        sshKeys: server.sshKeys,
      })
      entry.machine = machine
      await machine.prepare()
      this.events.push({ serverId: server.id, event: 'boot' })
      await machine.start()
    })()
    entry.booted.catch(() => undefined)
    return { ipv4: address, booted: entry.booted }
  }

  async power(serverId: number, operation: PowerOperation): Promise<void> {
    const machine = await this.machine(serverId)
    this.events.push({ serverId, event: operation })
    if (operation === 'poweron') return machine.start()
    if (operation === 'poweroff') return machine.powerOff()
    if (operation === 'shutdown') return machine.shutdown()
    if (operation === 'reboot') return machine.reboot()
    return machine.reset()
  }

  async deleteServer(serverId: number): Promise<void> {
    const entry = this.machines.get(serverId)
    if (!entry) return
    this.machines.delete(serverId)
    this.events.push({ serverId, event: 'delete' })
    await entry.booted.catch(() => undefined)
    await entry.machine?.destroy()
    this.bridge.release(entry.address)
  }

  async createVolume(volume: { id: number; sizeGb: number; format: string | null }): Promise<void> {
    await this.volumes.create(volume.id, volume.sizeGb, volume.format)
  }

  async attachVolume(volumeId: number, serverId: number): Promise<void> {
    const volume = this.volumes.get(volumeId)
    if (!volume) throw new Error(`volume ${volumeId} has no block device`)
    const machine = await this.machine(serverId)
    this.events.push({ serverId, event: 'attach', volumeId })
    await machine.attach(volume)
  }

  async detachVolume(volumeId: number, serverId: number): Promise<void> {
    const entry = this.machines.get(serverId)
    this.events.push({ serverId, event: 'detach', volumeId })
    if (!entry) return
    await entry.booted.catch(() => undefined)
    await entry.machine?.detach(volumeId)
  }

  async deleteVolume(volumeId: number): Promise<void> {
    await this.volumes.delete(volumeId)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    const entries = [...this.machines.values()]
    this.machines.clear()
    await Promise.allSettled(
      entries.map(async (entry) => {
        await entry.booted.catch(() => undefined)
        await entry.machine?.destroy()
      }),
    )
    await this.volumes.deleteAll()
    await rm(this.dir, { recursive: true, force: true, maxRetries: 3 })
    await this.bridge.remove()
    process.off('exit', this.atExit)
  }

  /** What close() does, synchronously, for a process that is exiting: kill, detach, remove. */
  private killSync(): void {
    for (const entry of this.machines.values()) entry.machine?.killSync()
    this.machines.clear()
    this.volumes.detachAllSync()
    rmSync(this.dir, { recursive: true, force: true, maxRetries: 3 })
    this.bridge.removeSync()
  }

  private async machine(serverId: number): Promise<Machine> {
    const entry = this.machines.get(serverId)
    if (!entry) throw new Error(`server ${serverId} has no machine`)
    // A power action or an attach right after the create waits for its boot.
    await entry.booted
    return entry.machine!
  }
}
