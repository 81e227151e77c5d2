// The system commands install and uninstall run (systemctl, useradd and the like), a failure coded
// GATEWAY_INSTALL_FAILED with its last line of output, and the units beside the gateway's written, enabled
// and removed, each step only when it is needed.
import { existsSync } from 'node:fs'
import { readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { writeFileAtomic } from '../../fs/atomic-file.js'
import type { InstallHost } from './install-host.js'
import { ARCHIVE_SHIP_TIMER_NAME, ARCHIVE_SHIP_UNIT_NAME, GATEWAY_UNIT_NAME } from './unit-file.js'
import { makeDirectories } from '../../fs/make-directories.js'

export async function systemctl(host: InstallHost, args: readonly string[]): Promise<string> {
  const result = await host.run('systemctl', args)
  if (result.code !== 0) throw commandFailed(`systemctl ${args.join(' ')}`, result.stderr || result.stdout)
  return result.stdout.trim()
}

export async function mustRun(host: InstallHost, file: string, args: readonly string[]): Promise<void> {
  const result = await host.run(file, args)
  if (result.code !== 0) throw commandFailed(`${file} ${args.join(' ')}`, result.stderr || result.stdout)
}

export function commandFailed(command: string, output: string): FleetkitError {
  const last = output.trim().split('\n').pop()?.slice(0, 300) || 'no output'
  return new FleetkitError('GATEWAY_INSTALL_FAILED', `${command} failed: ${last}`, {
    actions: ['fix what it names, then run fleetkit gateway install again (it redoes only what is missing)'],
    data: { command, output: last },
  })
}

export async function unitState(
  host: InstallHost,
  name = GATEWAY_UNIT_NAME,
): Promise<{ enabled: boolean; active: boolean }> {
  const [enabled, active] = await Promise.all([
    host.run('systemctl', ['is-enabled', name]),
    host.run('systemctl', ['is-active', name]),
  ])
  return { enabled: enabled.stdout.trim() === 'enabled', active: active.stdout.trim() === 'active' }
}

/** The shipping service (started by its timer only: never enabled itself), then its timer, enabled and started. */
export async function installShipTimer(host: InstallHost, service: string, actions: string[]): Promise<void> {
  await writeUnitFile(host, ARCHIVE_SHIP_UNIT_NAME, service, actions)
  await installUnit(host, ARCHIVE_SHIP_TIMER_NAME, host.archiveShipTimer, actions)
}

/** Writes unit file `name` when its text differs, then reloads systemd; true when it wrote. */
async function writeUnitFile(
  host: InstallHost,
  name: string,
  text: string,
  actions: string[],
  note = '',
): Promise<boolean> {
  const path = join(host.unitDir, name)
  const current = await readFile(path, 'utf8').catch(() => undefined)
  if (current === text) return false
  await makeDirectories(host.unitDir)
  await writeFileAtomic(path, text, 0o644)
  await systemctl(host, ['daemon-reload'])
  actions.push(`${current === undefined ? 'wrote' : 'rewrote'} ${path}${note}`)
  return true
}

/** What installUnit says of a unit, and whether something besides its text asks for a restart. */
export interface UnitInstallOptions {
  /** Appended to the "wrote PATH" action (the gateway names its ExecStart). */
  wroteNote?: string
  /** Restart a running unit even when its text is unchanged (the gateway: its state's ownership changed). */
  restartToo?: boolean
  /** Why it was restarted, in the action; default "its unit changed". */
  restartReason?: string
}

/** Writes unit `name` when it differs, enables and starts it (restarts it when it changed); each step only when needed. */
export async function installUnit(
  host: InstallHost,
  name: string,
  text: string,
  actions: string[],
  options: UnitInstallOptions = {},
): Promise<void> {
  const { enabled, active } = await unitState(host, name)
  const wrote = await writeUnitFile(host, name, text, actions, options.wroteNote)
  if (!enabled) {
    await systemctl(host, ['enable', name])
    actions.push(`enabled ${name} (it starts at boot)`)
  }
  if (!active) {
    await systemctl(host, ['start', name])
    actions.push(`started ${name}`)
  } else if (wrote || options.restartToo === true) {
    await systemctl(host, ['restart', name])
    actions.push(`restarted ${name} (${options.restartReason ?? 'its unit changed'})`)
  }
}

/** Stops, disables and removes unit `name` when it is there (nothing when it never was). */
export async function removeUnit(host: InstallHost, name: string, actions: string[]): Promise<void> {
  const path = join(host.unitDir, name)
  const { enabled, active } = await unitState(host, name)
  if (enabled || active) {
    await systemctl(host, ['disable', '--now', name])
    actions.push(`stopped and disabled ${name}`)
  }
  if (existsSync(path)) {
    await rm(path, { force: true })
    await systemctl(host, ['daemon-reload'])
    actions.push(`removed ${path}`)
  }
}
