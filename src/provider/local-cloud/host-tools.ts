// What the local cloud needs of this machine before it starts anything: root (it makes a bridge, loop
// devices and containers) and the programs it runs, each named with the Debian package that installs it.
import { accessSync, constants } from 'node:fs'
import { join } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'

/** Program -> the Debian package that ships it. */
const LOCAL_CLOUD_TOOLS: Readonly<Record<string, string>> = {
  debootstrap: 'debootstrap',
  'systemd-nspawn': 'systemd-container',
  unshare: 'util-linux',
  nsenter: 'util-linux',
  losetup: 'mount',
  ip: 'iproute2',
  'mkfs.ext4': 'e2fsprogs',
  'mkfs.xfs': 'xfsprogs',
}

export interface HostFacts {
  uid: number
  /** Whether a program is on PATH (or in the sbin folders a root shell has). */
  has(program: string): boolean
}

function thisHost(env: NodeJS.ProcessEnv = process.env): HostFacts {
  const dirs = [...(env.PATH ?? '').split(':'), '/usr/local/sbin', '/usr/sbin', '/sbin'].filter((d) => d !== '')
  return {
    uid: process.getuid?.() ?? -1,
    has: (program) =>
      dirs.some((dir) => {
        try {
          accessSync(join(dir, program), constants.X_OK)
          return true
        } catch {
          return false
        }
      }),
  }
}

/** Throws PROVIDER_STUB_NEEDS_ROOT or PROVIDER_STUB_TOOL_MISSING (naming the apt packages) before anything starts. */
export function assertLocalCloudHost(host: HostFacts = thisHost()): void {
  if (host.uid !== 0) {
    throw new FleetkitError(
      'PROVIDER_STUB_NEEDS_ROOT',
      'fleetkit provider stub --boot makes a bridge, loop devices and containers: run it as root',
      { actions: ['sudo fleetkit provider stub --boot'] },
    )
  }
  const missing = Object.keys(LOCAL_CLOUD_TOOLS).filter((program) => !host.has(program))
  if (missing.length > 0) {
    const packages = [...new Set(missing.map((program) => LOCAL_CLOUD_TOOLS[program]!))]
    throw new FleetkitError(
      'PROVIDER_STUB_TOOL_MISSING',
      `the local cloud needs ${missing.join(', ')}: install ${packages.join(' ')}`,
      { actions: [`apt-get install ${packages.join(' ')}`], data: { missing, packages } },
    )
  }
}
