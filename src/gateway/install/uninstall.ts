// `fleetkit gateway uninstall`: the units stopped, disabled and removed (the reconcile service and the
// shipping timer first), the event recorded, and with --remove-account the state, the WAL archive and the
// archive's SSH key given back before the account and its group go. The state is never removed.
import { existsSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { planArchiveOwnership } from './archive-sharing.js'
import { lookupIds } from './host-runner.js'
import { requireRootAndSystemd } from './install-checks.js'
import type { InstallHost } from './install-host.js'
import { applyOwnership, type Ids, planRootState } from './state-sharing.js'
import { mustRun, removeUnit, systemctl, unitState } from './systemd-units.js'
import {
  ARCHIVE_SHIP_TIMER_NAME,
  ARCHIVE_SHIP_UNIT_NAME,
  GATEWAY_ACCOUNT,
  GATEWAY_UNIT_NAME,
  RECONCILE_UNIT_NAME,
} from './unit-file.js'

export interface GatewayUninstallResult {
  unitPath: string
  account: string
  stateDir: string
  changed: boolean
  actions: string[]
  /** The state directory is never removed. */
  stateKept: true
  /** True when --remove-account removed the account and its group (the state then belongs to root again). */
  accountRemoved: boolean
  next: string
}

interface UninstallOptions {
  stateDir: string
}

/**
 * Stop and disable the unit and remove its file. The state and the account stay: the account
 * still owns the state (the next CLI command as root starts the database as that account).
 */
async function uninstallGateway(host: InstallHost, options: UninstallOptions): Promise<GatewayUninstallResult> {
  requireRootAndSystemd(host, 'uninstall')
  const unitPath = join(host.unitDir, GATEWAY_UNIT_NAME)
  const present = existsSync(unitPath)
  const { enabled, active } = await unitState(host)
  const actions: string[] = []
  // The reconcile service (--with-reconcile) and the shipping timer go first: they use the gateway's state.
  await removeUnit(host, RECONCILE_UNIT_NAME, actions)
  await removeUnit(host, ARCHIVE_SHIP_TIMER_NAME, actions)
  await removeUnit(host, ARCHIVE_SHIP_UNIT_NAME, actions)
  if (enabled || active) {
    // The unit's ExecStopPost stops the embedded server it ran.
    await systemctl(host, ['disable', '--now', GATEWAY_UNIT_NAME])
    actions.push(`stopped and disabled ${GATEWAY_UNIT_NAME}`)
  }
  if (present) {
    await rm(unitPath, { force: true })
    await systemctl(host, ['daemon-reload'])
    actions.push(`removed ${unitPath}`)
  }
  return {
    unitPath,
    account: GATEWAY_ACCOUNT,
    stateDir: options.stateDir,
    changed: actions.length > 0,
    actions,
    stateKept: true,
    accountRemoved: false,
    next: `fleetkit db status (the state stays in ${options.stateDir})`,
  }
}

/**
 * `uninstall --remove-account`: the state goes back to root (its data directory to `postgres`, as
 * root's own state has it), then the account and its group are removed. The embedded server must
 * not run (the caller stops it).
 */
async function removeGatewayAccount(
  host: InstallHost,
  options: UninstallOptions & { postgres: Ids },
): Promise<string[]> {
  const actions: string[] = []
  const account = await lookupIds(host.run, 'passwd', GATEWAY_ACCOUNT)
  const server = await host.runningServer(options.stateDir)
  if (server && server.uid === account?.uid) {
    throw new FleetkitError(
      'GATEWAY_INSTALL_SERVER_RUNNING',
      `the embedded PostgreSQL of ${options.stateDir} still runs as ${GATEWAY_ACCOUNT} (PID ${server.pid}): stop it (fleetkit db stop), then run fleetkit gateway uninstall --remove-account again`,
      {
        actions: ['fleetkit db stop', 'fleetkit gateway uninstall --remove-account'],
        data: { stateDir: options.stateDir, pid: server.pid, uid: server.uid },
      },
    )
  }
  if (existsSync(options.stateDir)) {
    const changes = await planRootState(options.stateDir, options.postgres)
    await applyOwnership(changes)
    if (changes.length > 0) actions.push(`gave ${options.stateDir} back to root (its data directory to postgres)`)
    const archive = await planArchiveOwnership(options.stateDir, { archive: options.postgres, key: { uid: 0, gid: 0 } })
    await applyOwnership(archive)
    if (archive.length > 0) actions.push("gave the WAL archive back to postgres and the archive's SSH key to root")
  }
  if (account) {
    await mustRun(host, 'userdel', [GATEWAY_ACCOUNT])
    actions.push(`removed the account ${GATEWAY_ACCOUNT}`)
  }
  if (await lookupIds(host.run, 'group', GATEWAY_ACCOUNT)) {
    await mustRun(host, 'groupdel', [GATEWAY_ACCOUNT])
    actions.push(`removed the group ${GATEWAY_ACCOUNT}`)
  }
  return actions
}

export interface UninstallFlow extends UninstallOptions {
  removeAccount: boolean
  /** The `postgres` user's ids (created if missing): the data directory's owner once root has the state back. */
  postgresAccount: () => Promise<Ids>
  /** Records the event in the state (opens it; as root, the embedded server then runs as the state's owner). */
  record: (result: GatewayUninstallResult) => Promise<void>
  /** Whether the embedded server of the state runs now, and how to stop it. */
  serverRunning: () => Promise<boolean>
  stopServer: () => Promise<void>
}

/**
 * The whole uninstall: the unit (uninstallGateway), the event, and with `removeAccount` the state
 * back to root and the account gone. A server started only to record the event is stopped again.
 */
export async function uninstallGatewayService(host: InstallHost, flow: UninstallFlow): Promise<GatewayUninstallResult> {
  const result = await uninstallGateway(host, flow)
  const account = await lookupIds(host.run, 'passwd', GATEWAY_ACCOUNT)
  const group = await lookupIds(host.run, 'group', GATEWAY_ACCOUNT)
  const accountWork = flow.removeAccount && (account !== undefined || group !== undefined)
  if (!result.changed && !accountWork) return result
  const wasRunning = await flow.serverRunning()
  await flow.record({ ...result, changed: true, accountRemoved: accountWork })
  if (!wasRunning || accountWork) await flow.stopServer()
  if (accountWork) {
    result.actions.push(...(await removeGatewayAccount(host, { ...flow, postgres: await flow.postgresAccount() })))
    result.accountRemoved = true
    result.changed = true
    result.next = `fleetkit db status (the state stays in ${flow.stateDir}, root's again)`
  }
  return result
}
