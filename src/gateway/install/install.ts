// `fleetkit gateway install`: the gateway as a systemd service on the state every
// CLI of this machine uses. Everything is judged first (root, systemd, paths, who runs the database);
// then the account, the state's ownership, the unit and its start, each only when it differs.
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { readArchiveRemote } from '../../store/embedded/archive-remote.js'
import { embeddedServerPaths } from '../../store/embedded/paths.js'
import { archiveDirOutside, archiveIdentityFile, planArchiveOwnership } from './archive-sharing.js'
import { lookupIds } from './host-runner.js'
import {
  checkReachable,
  HIDDEN_BY_UNIT,
  pathUnusable,
  requireRootAndSystemd,
  stateDirProblem,
} from './install-checks.js'
import type { InstallHost } from './install-host.js'
import { applyOwnership, planSharedState } from './state-sharing.js'
import { commandFailed, installShipTimer, installUnit, mustRun, removeUnit, unitState } from './systemd-units.js'
import {
  ARCHIVE_SHIP_TIMER_NAME,
  ARCHIVE_SHIP_UNIT_NAME,
  GATEWAY_ACCOUNT,
  GATEWAY_UNIT_NAME,
  RECONCILE_UNIT_NAME,
  renderArchiveShipUnit,
  renderGatewayUnit,
  renderReconcileUnit,
  unitPathProblem,
} from './unit-file.js'
import { makeDirectories } from '../../fs/make-directories.js'

export interface GatewayInstallResult {
  /** The unit file written, for example /etc/systemd/system/fleetkit-gateway.service. */
  unitPath: string
  /** The account (and group) the gateway runs as and that owns the state. */
  account: string
  stateDir: string
  /** The unit's ExecStart line. */
  execStart: string
  /** The reconcile unit written beside it (--with-reconcile); null without. */
  reconcileUnitPath: string | null
  /**
   * The timer that runs `fleetkit db archive ship` every minute, written and enabled when the state has
   * an off-host remote (`fleetkit db archive remote add`); null without one.
   */
  archiveShipTimerPath: string | null
  /** False when everything already was as it should be (nothing was done). */
  changed: boolean
  /** One line per thing done, in order. */
  actions: string[]
  /** True when the state directory belonged to another account (root's) and was given to this one. */
  tookOver: boolean
  /** What to run next. */
  next: string
}

export interface InstallOptions {
  stateDir: string
  /** The Node.js binary and this CLI's bin script, absolute (ExecStart and ExecStopPost). */
  command: readonly string[]
  /** Also install, enable and start fleetkit-reconcile.service on the same account and state. */
  withReconcile?: boolean
}

const NEXT = 'systemctl status fleetkit-gateway'

/** Install (or bring back in line) the gateway service; a second run changes nothing and says so. */
export async function installGateway(host: InstallHost, options: InstallOptions): Promise<GatewayInstallResult> {
  requireRootAndSystemd(host, 'install')
  const { stateDir } = options
  const unitPath = join(host.unitDir, GATEWAY_UNIT_NAME)
  const reinstall = 'install fleetkit where every user can read it (npm install -g as root), then run it again'
  for (const path of options.command) await checkReachable(path, reinstall)
  const stateProblem = unitPathProblem(stateDir) ?? (await stateDirProblem(stateDir))
  if (stateProblem)
    throw pathUnusable(stateDir, stateProblem, 'use a directory of its own: --state-dir /var/lib/fleetkit')

  let account = await lookupIds(host.run, 'passwd', GATEWAY_ACCOUNT)
  const group = await lookupIds(host.run, 'group', GATEWAY_ACCOUNT)
  const server = await host.runningServer(stateDir)
  if (server && server.uid !== account?.uid) {
    throw new FleetkitError(
      'GATEWAY_INSTALL_SERVER_RUNNING',
      `the embedded PostgreSQL of ${stateDir} runs as uid ${server.uid} (PID ${server.pid}), not as ${GATEWAY_ACCOUNT}: stop it first (fleetkit db stop), then run fleetkit gateway install again`,
      {
        actions: ['fleetkit db stop', 'fleetkit gateway install'],
        data: { stateDir, pid: server.pid, uid: server.uid },
      },
    )
  }
  const archiveDir = await archiveDirOutside(stateDir)
  const archiveProblem = archiveDir === undefined ? undefined : unitPathProblem(archiveDir)
  if (archiveDir !== undefined && archiveProblem)
    throw pathUnusable(archiveDir, archiveProblem, 'fleetkit db archive enable DIR with a plain absolute path')
  // The timer ships as the account, which the unit keeps out of /home and /root (ProtectHome=yes).
  const archiveKey = await archiveIdentityFile(stateDir)
  if (archiveKey !== undefined && HIDDEN_BY_UNIT.some((dir) => archiveKey.startsWith(`${dir}/`)))
    throw pathUnusable(
      archiveKey,
      'is under a directory the unit hides (ProtectHome=yes), so the archive cannot be shipped',
      'install -m 0600 KEY /etc/fleetkit/archive_ed25519, then fleetkit db archive remote add URL --host-key LINE --identity /etc/fleetkit/archive_ed25519',
    )
  const unit = renderGatewayUnit(host.template, {
    command: options.command,
    stateDir,
    user: GATEWAY_ACCOUNT,
    group: GATEWAY_ACCOUNT,
    ...(archiveDir === undefined ? {} : { archiveDir }),
  })
  const execStart = /^ExecStart=(.*)$/m.exec(unit)?.[1] ?? ''
  const current = await readFile(unitPath, 'utf8').catch(() => undefined)
  const { enabled, active } = await unitState(host)
  const stateExists = existsSync(stateDir)
  const ownership = account && stateExists ? await planSharedState(stateDir, account) : undefined
  const archiveOwnership = account
    ? await planArchiveOwnership(stateDir, { archive: account, key: account })
    : undefined
  const reconcile = options.withReconcile
    ? renderReconcileUnit(host.reconcileTemplate, {
        command: options.command,
        stateDir,
        user: GATEWAY_ACCOUNT,
        group: GATEWAY_ACCOUNT,
      })
    : undefined
  // Shipping on a schedule once there is somewhere to ship to (a remote added later: install again).
  const archiveShip = (await readArchiveRemote(embeddedServerPaths(stateDir)))
    ? renderArchiveShipUnit(host.archiveShipTemplate, {
        command: options.command,
        stateDir,
        user: GATEWAY_ACCOUNT,
        group: GATEWAY_ACCOUNT,
      })
    : undefined
  const result = (changed: boolean, actions: string[], tookOver: boolean): GatewayInstallResult => ({
    unitPath,
    account: GATEWAY_ACCOUNT,
    stateDir,
    execStart,
    reconcileUnitPath: reconcile === undefined ? null : join(host.unitDir, RECONCILE_UNIT_NAME),
    archiveShipTimerPath: archiveShip === undefined ? null : join(host.unitDir, ARCHIVE_SHIP_TIMER_NAME),
    changed,
    actions,
    tookOver,
    next: reconcile === undefined ? NEXT : `${NEXT} fleetkit-reconcile`,
  })
  const actions: string[] = []
  if (
    account &&
    group &&
    current === unit &&
    enabled &&
    active &&
    ownership?.length === 0 &&
    archiveOwnership?.length === 0
  ) {
    if (reconcile !== undefined) await installUnit(host, RECONCILE_UNIT_NAME, reconcile, actions)
    await reconcileShipTimer(host, archiveShip, actions)
    return result(actions.length > 0, actions, false)
  }

  // Judged; from here on, changes. Each step is skipped when already done, so a re-run after a failure finishes the work.
  if (!group) {
    await mustRun(host, 'groupadd', ['--system', GATEWAY_ACCOUNT])
    actions.push(`created the system group ${GATEWAY_ACCOUNT}`)
  }
  if (!account) {
    await mustRun(host, 'useradd', [
      '--system',
      '--gid',
      GATEWAY_ACCOUNT,
      '--home-dir',
      stateDir,
      '--no-create-home',
      '--shell',
      '/usr/sbin/nologin',
      '--comment',
      'fleetkit gateway',
      GATEWAY_ACCOUNT,
    ])
    account = await lookupIds(host.run, 'passwd', GATEWAY_ACCOUNT)
    if (!account) throw commandFailed(`getent passwd ${GATEWAY_ACCOUNT}`, 'the account just created is not found')
    actions.push(`created the system account ${GATEWAY_ACCOUNT}`)
  }
  if (!stateExists) {
    await makeDirectories(stateDir, 0o700)
    actions.push(`created ${stateDir}`)
  }
  const changes = await planSharedState(stateDir, account)
  const foreign = changes.filter((c) => c.foreign).length
  await applyOwnership(changes)
  if (foreign > 0 && stateExists) {
    actions.push(
      `took over ${stateDir}: ${foreign} path(s) belonging to another account (root's state) now belong to ${GATEWAY_ACCOUNT}:${GATEWAY_ACCOUNT}`,
    )
  } else if (changes.length > 0) {
    actions.push(`shared ${stateDir} with the group ${GATEWAY_ACCOUNT} (${changes.length} path(s) set)`)
  }
  const archiveChanges = await planArchiveOwnership(stateDir, { archive: account, key: account })
  await applyOwnership(archiveChanges)
  if (archiveChanges.length > 0)
    actions.push(
      `gave ${GATEWAY_ACCOUNT} the WAL archive outside the state and the archive's SSH key (${archiveChanges.length} path(s))`,
    )
  await installUnit(host, GATEWAY_UNIT_NAME, unit, actions, {
    wroteNote: ` (ExecStart=${execStart})`,
    restartToo: changes.length > 0,
    restartReason: 'its unit or state changed',
  })
  // After the gateway: the reconcile service uses the database the gateway's unit runs.
  if (reconcile !== undefined) await installUnit(host, RECONCILE_UNIT_NAME, reconcile, actions)
  await reconcileShipTimer(host, archiveShip, actions)
  return result(true, actions, foreign > 0 && stateExists)
}

/** The shipping timer while a remote is recorded; once it is removed (`db archive remote remove`), neither unit. */
async function reconcileShipTimer(host: InstallHost, service: string | undefined, actions: string[]): Promise<void> {
  if (service !== undefined) return installShipTimer(host, service, actions)
  await removeUnit(host, ARCHIVE_SHIP_TIMER_NAME, actions)
  await removeUnit(host, ARCHIVE_SHIP_UNIT_NAME, actions)
}
