// What the local Hetzner Cloud stub asks of real machines behind its API when it runs with --boot
// (src/provider/local-cloud/): the API keeps its answers and state, and each change that a cloud carries out on
// a host (a server created, powered, deleted; a volume made, attached, detached) is also handed here. Each
// call returns at once with the work as a promise: the action the API answers with finishes only when that
// work has, and ends in error when it failed. Without machines (the default) the stub is what it was.

export interface MachineServer {
  id: number
  name: string
  /** The image's name as the create request gave it (`debian-12`, `debian-13`). */
  image: string
  /** user_data as sent: plain, base64, or gzip+base64 (the forms cloud-init's Hetzner source takes). */
  userData?: string
  /** The public keys of the SSH keys named in the request: root's authorized keys, as on Hetzner. */
  sshKeys: string[]
  /** The attached volumes' IDs at boot. */
  volumes: number[]
}

export type PowerOperation = 'poweron' | 'poweroff' | 'shutdown' | 'reboot' | 'reset'

export interface StubMachines {
  /** Whether it can boot this image (by name): the stub refuses any other as invalid input. */
  bootsImage(name: string): boolean
  /** Chooses the server's address (synchronously: the create's answer carries it) and boots it. */
  createServer(server: MachineServer): { ipv4: string; booted: Promise<void> }
  power(serverId: number, operation: PowerOperation): Promise<void>
  /** Stops the machine and removes everything it had; its volumes stay (detached). */
  deleteServer(serverId: number): Promise<void>
  createVolume(volume: { id: number; sizeGb: number; format: string | null }): Promise<void>
  attachVolume(volumeId: number, serverId: number): Promise<void>
  detachVolume(volumeId: number, serverId: number): Promise<void>
  deleteVolume(volumeId: number): Promise<void>
  /** Stops every machine and removes every volume, address and network it made. */
  close(): Promise<void>
}
