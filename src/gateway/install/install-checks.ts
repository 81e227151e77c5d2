// What `gateway install` and `uninstall` judge before they change anything: root and systemd, and the
// paths the unit must reach (this fleetkit, its Node.js, the state directory, the archive's SSH key).
import { lstat, stat } from 'node:fs/promises'
import { dirname } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { InstallHost } from './install-host.js'
import { unitPathProblem } from './unit-file.js'

export function requireRootAndSystemd(host: InstallHost, verb: 'install' | 'uninstall'): void {
  if (host.uid !== 0) {
    throw new FleetkitError(
      'GATEWAY_INSTALL_NOT_ROOT',
      `fleetkit gateway ${verb} changes accounts and /etc/systemd: run it as root (sudo fleetkit gateway ${verb})`,
      { actions: [`sudo fleetkit gateway ${verb}`], data: { uid: host.uid } },
    )
  }
  if (!host.systemdRunning) {
    throw new FleetkitError(
      'GATEWAY_INSTALL_NO_SYSTEMD',
      `systemd is not running on this machine (no /run/systemd/system): fleetkit gateway ${verb} needs it`,
      {
        actions: ['run the gateway yourself: fleetkit gateway serve (docs/gateway.md)'],
        data: {},
      },
    )
  }
}

export function pathUnusable(path: string, why: string, action: string): FleetkitError {
  return new FleetkitError('GATEWAY_INSTALL_PATH_UNUSABLE', `${path} ${why}; the gateway service cannot use it`, {
    actions: [action],
    data: { path, problem: why },
  })
}

/** ProtectHome=yes hides these from the service. */
export const HIDDEN_BY_UNIT = ['/home', '/root', '/run/user']

/** Every directory above `path` must let an unprivileged account through, and `path` be readable by it. */
export async function checkReachable(path: string, action: string): Promise<void> {
  const problem = unitPathProblem(path)
  if (problem) throw pathUnusable(path, problem, action)
  if (HIDDEN_BY_UNIT.some((dir) => path === dir || path.startsWith(`${dir}/`))) {
    throw pathUnusable(path, 'is under a directory the unit hides (ProtectHome=yes)', action)
  }
  const info = await stat(path).catch(() => undefined)
  if (!info) throw pathUnusable(path, 'does not exist', action)
  if ((info.mode & 0o004) === 0)
    throw pathUnusable(path, `is not readable by other users (mode ${mode(info.mode)})`, action)
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    const d = await stat(dir)
    if ((d.mode & 0o001) === 0) {
      throw pathUnusable(path, `cannot be reached by other users: ${dir} is mode ${mode(d.mode)}`, action)
    }
    if (dirname(dir) === dir) return
  }
}

/** Directories whose subtree is never a state directory: the install gives the whole tree to the account. */
const SYSTEM_TREES = ['/etc', '/usr', '/boot', '/dev', '/proc', '/sys', '/run', '/bin', '/sbin', '/lib', '/lib64']
const SYSTEM_DIRS = ['/var/lib', '/var/log', '/var/cache', '/var/tmp', '/var/spool', '/usr/local']

/**
 * Why `dir` cannot be the service's state directory: everything under it is given to the account,
 * so it must be a directory of fleetkit's own, not a system directory, not a link.
 */
export async function stateDirProblem(dir: string): Promise<string | undefined> {
  const clean = dir.replace(/\/+$/, '') || '/'
  if (clean.split('/').filter(Boolean).length < 2) return 'is a top-level directory'
  if (SYSTEM_DIRS.includes(clean)) return 'is a system directory'
  const tree = SYSTEM_TREES.find((t) => clean.startsWith(`${t}/`))
  if (tree) return `lies under ${tree}`
  if (HIDDEN_BY_UNIT.some((hidden) => clean.startsWith(`${hidden}/`))) {
    return 'is under a directory the unit hides (ProtectHome=yes)'
  }
  const info = await lstat(clean).catch(() => undefined)
  if (info?.isSymbolicLink()) return 'is a symbolic link'
  if (info && !info.isDirectory()) return 'is not a directory'
  return undefined
}

function mode(m: number): string {
  return (m & 0o7777).toString(8).padStart(4, '0')
}
