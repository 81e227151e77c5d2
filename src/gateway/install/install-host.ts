// What install and uninstall act on (InstallHost), and the real machine behind it: systemctl and useradd through runOnHost, the shipped unit,
// /etc/systemd/system, and the embedded server's postmaster from /proc.
import { existsSync, realpathSync } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'

import { packagePath } from '../../package-root.js'
import { livePostmasterPid } from '../../store/embedded/server.js'
import { type HostRunner, runOnHost } from './host-runner.js'

export interface InstallHost {
  /** The running user's uid (only root may install). */
  uid: number
  run: HostRunner
  /** True when systemd is PID 1 (/run/systemd/system exists). */
  systemdRunning: boolean
  /** Where the unit goes: /etc/systemd/system. */
  unitDir: string
  /** The shipped unit, systemd/fleetkit-gateway.service. */
  template: string
  /** The shipped systemd/fleetkit-reconcile.service (--with-reconcile). */
  reconcileTemplate: string
  /** The shipped systemd/fleetkit-archive-ship.service and .timer (a state with an off-host remote). */
  archiveShipTemplate: string
  archiveShipTimer: string
  /** The PID and uid of the embedded server running on the state directory, if one runs. */
  runningServer: (stateDir: string) => Promise<{ pid: number; uid: number } | undefined>
}

export async function machineInstallHost(): Promise<InstallHost> {
  return {
    uid: process.getuid?.() ?? -1,
    run: runOnHost,
    systemdRunning: existsSync('/run/systemd/system'),
    unitDir: '/etc/systemd/system',
    template: await readFile(packagePath('systemd', 'fleetkit-gateway.service'), 'utf8'),
    reconcileTemplate: await readFile(packagePath('systemd', 'fleetkit-reconcile.service'), 'utf8'),
    archiveShipTemplate: await readFile(packagePath('systemd', 'fleetkit-archive-ship.service'), 'utf8'),
    archiveShipTimer: await readFile(packagePath('systemd', 'fleetkit-archive-ship.timer'), 'utf8'),
    runningServer: async (stateDir) => {
      const pid = await livePostmasterPid(stateDir)
      if (pid === undefined) return undefined
      const info = await stat(`/proc/${pid}`).catch(() => undefined)
      return info ? { pid, uid: info.uid } : undefined
    },
  }
}

/** The running fleetkit as the unit runs it: this Node.js and the CLI's bin script, links resolved. */
export function runningCliCommand(argv: readonly string[] = process.argv): string[] {
  const script = argv[1]
  if (!script) throw new Error('no script in process.argv')
  return [realpathSync(process.execPath), realpathSync(script)]
}
