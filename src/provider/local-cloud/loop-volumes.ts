// The local cloud's volumes: a sparse file of the volume's size on a loop device, formatted when the create
// asked for a format (xfs or ext4, as the API does), detached and removed when the volume is deleted or
// the stub ends.
import { execFileSync } from 'node:child_process'
import { rm, stat } from 'node:fs/promises'
import { join } from 'node:path'

import { run, runOk } from './run.js'

export interface LoopVolume {
  id: number
  file: string
  /** `/dev/loopN` on this machine. */
  device: string
  /** The block device's numbers, to make its node inside a machine. */
  major: number
  minor: number
}

export class LoopVolumes {
  private readonly volumes = new Map<number, LoopVolume>()

  constructor(private readonly dir: string) {}

  get(id: number): LoopVolume | undefined {
    return this.volumes.get(id)
  }

  /** Every loop device the local cloud holds (for its own test: nothing is left after the stub ends). */
  devices(): string[] {
    return [...this.volumes.values()].map((v) => v.device)
  }

  async create(id: number, sizeGb: number, format: string | null): Promise<LoopVolume> {
    const file = join(this.dir, `volume-${id}.img`)
    await runOk('truncate', ['-s', `${sizeGb}G`, file])
    if (format === 'xfs') await runOk('mkfs.xfs', ['-q', file])
    if (format === 'ext4') await runOk('mkfs.ext4', ['-q', '-F', file])
    const device = (await runOk('losetup', ['--find', '--show', file])).trim()
    const { rdev } = await stat(device)
    const volume = {
      id,
      file,
      device,
      major: Math.floor(rdev / 256) & 0xfff,
      minor: (rdev & 255) | ((rdev >> 12) & 0xfff00),
    }
    this.volumes.set(id, volume)
    return volume
  }

  async delete(id: number): Promise<void> {
    const volume = this.volumes.get(id)
    if (!volume) return
    this.volumes.delete(id)
    await run('losetup', ['-d', volume.device])
    await rm(volume.file, { force: true })
  }

  /** At process exit: every loop device detached (a busy one as soon as its last user closes it). */
  detachAllSync(): void {
    for (const volume of this.volumes.values()) {
      try {
        execFileSync('losetup', ['-d', volume.device], { stdio: 'ignore' })
      } catch {
        /* detached */
      }
    }
    this.volumes.clear()
  }

  async deleteAll(): Promise<void> {
    for (const id of [...this.volumes.keys()]) await this.delete(id)
  }
}
