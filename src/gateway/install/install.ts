// `fleetkit gateway install` and `uninstall`: the gateway as a systemd service on the state every
// CLI of this machine uses. Everything is judged first (root, systemd, paths, who runs the database);
// then the account, the state's ownership, the unit and its start, each only when it differs.
import { existsSync } from 'node:fs'
import { lstat, mkdir, readFile, rm, stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { writeFileAtomic } from '../../fs/atomic-file.js'
import { readArchiveRemote } from '../../store/embedded/archive-remote.js'
import { embeddedServerPaths } from '../../store/embedded/paths.js'
import { archiveDirOutside, archiveIdentityFile, planArchiveOwnership } from './archive-sharing.js'
import { type HostRunner, lookupIds } from './host-runner.js'
import { applyOwnership, type Ids, planRootState, planSharedState } from './state-sharing.js'
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

export interface InstallOptions {
  stateDir: string
  /** The Node.js binary and this CLI's bin script, absolute (ExecStart and ExecStopPost). */
  command: readonly string[]
  /** Also install, enable and start fleetkit-reconcile.service on the same account and state. */
  withReconcile?: boolean
}

const NEXT = 'systemctl status fleetkit-gateway'

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

function pathUnusable(path: string, why: string, action: string): FleetkitError {
  return new FleetkitError('GATEWAY_INSTALL_PATH_UNUSABLE', `${path} ${why}; the gateway service cannot use it`, {
    actions: [action],
    data: { path, problem: why },
  })
}

/** ProtectHome=yes hides these from the service. */
const HIDDEN_BY_UNIT = ['/home', '/root', '/run/user']

/** Every directory above `path` must let an unprivileged account through, and `path` be readable by it. */
async function checkReachable(path: string, action: string): Promise<void> {
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
async function stateDirProblem(dir: string): Promise<string | undefined> {
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

async function systemctl(host: InstallHost, args: readonly string[]): Promise<string> {
  const result = await host.run('systemctl', args)
  if (result.code !== 0) throw commandFailed(`systemctl ${args.join(' ')}`, result.stderr || result.stdout)
  return result.stdout.trim()
}

async function mustRun(host: InstallHost, file: string, args: readonly string[]): Promise<void> {
  const result = await host.run(file, args)
  if (result.code !== 0) throw commandFailed(`${file} ${args.join(' ')}`, result.stderr || result.stdout)
}

function commandFailed(command: string, output: string): FleetkitError {
  const last = output.trim().split('\n').pop()?.slice(0, 300) || 'no output'
  return new FleetkitError('GATEWAY_INSTALL_FAILED', `${command} failed: ${last}`, {
    actions: ['fix what it names, then run fleetkit gateway install again (it redoes only what is missing)'],
    data: { command, output: last },
  })
}

async function unitState(host: InstallHost, name = GATEWAY_UNIT_NAME): Promise<{ enabled: boolean; active: boolean }> {
  const [enabled, active] = await Promise.all([
    host.run('systemctl', ['is-enabled', name]),
    host.run('systemctl', ['is-active', name]),
  ])
  return { enabled: enabled.stdout.trim() === 'enabled', active: active.stdout.trim() === 'active' }
}

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
    if (archiveShip !== undefined) await installShipTimer(host, archiveShip, actions)
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
    await mkdir(stateDir, { recursive: true, mode: 0o700 })
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
  if (current !== unit) {
    await mkdir(host.unitDir, { recursive: true })
    await writeFileAtomic(unitPath, unit, 0o644)
    await systemctl(host, ['daemon-reload'])
    actions.push(`${current === undefined ? 'wrote' : 'rewrote'} ${unitPath} (ExecStart=${execStart})`)
  }
  if (!enabled) {
    await systemctl(host, ['enable', GATEWAY_UNIT_NAME])
    actions.push(`enabled ${GATEWAY_UNIT_NAME} (it starts at boot)`)
  }
  if (!active) {
    await systemctl(host, ['start', GATEWAY_UNIT_NAME])
    actions.push(`started ${GATEWAY_UNIT_NAME}`)
  } else if (current !== unit || changes.length > 0) {
    await systemctl(host, ['restart', GATEWAY_UNIT_NAME])
    actions.push(`restarted ${GATEWAY_UNIT_NAME} (its unit or state changed)`)
  }
  // After the gateway: the reconcile service uses the database the gateway's unit runs.
  if (reconcile !== undefined) await installUnit(host, RECONCILE_UNIT_NAME, reconcile, actions)
  if (archiveShip !== undefined) await installShipTimer(host, archiveShip, actions)
  return result(true, actions, foreign > 0 && stateExists)
}

/** The shipping service (started by its timer only: never enabled itself), then its timer, enabled and started. */
async function installShipTimer(host: InstallHost, service: string, actions: string[]): Promise<void> {
  const path = join(host.unitDir, ARCHIVE_SHIP_UNIT_NAME)
  const current = await readFile(path, 'utf8').catch(() => undefined)
  if (current !== service) {
    await mkdir(host.unitDir, { recursive: true })
    await writeFileAtomic(path, service, 0o644)
    await systemctl(host, ['daemon-reload'])
    actions.push(`${current === undefined ? 'wrote' : 'rewrote'} ${path}`)
  }
  await installUnit(host, ARCHIVE_SHIP_TIMER_NAME, host.archiveShipTimer, actions)
}

/** Writes unit `name` when it differs, enables and starts it (restarts it when it changed); each step only when needed. */
async function installUnit(host: InstallHost, name: string, text: string, actions: string[]): Promise<void> {
  const path = join(host.unitDir, name)
  const current = await readFile(path, 'utf8').catch(() => undefined)
  const { enabled, active } = await unitState(host, name)
  if (current !== text) {
    await mkdir(host.unitDir, { recursive: true })
    await writeFileAtomic(path, text, 0o644)
    await systemctl(host, ['daemon-reload'])
    actions.push(`${current === undefined ? 'wrote' : 'rewrote'} ${path}`)
  }
  if (!enabled) {
    await systemctl(host, ['enable', name])
    actions.push(`enabled ${name} (it starts at boot)`)
  }
  if (!active) {
    await systemctl(host, ['start', name])
    actions.push(`started ${name}`)
  } else if (current !== text) {
    await systemctl(host, ['restart', name])
    actions.push(`restarted ${name} (its unit changed)`)
  }
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

/** Stops, disables and removes unit `name` when it is there (nothing when it never was). */
async function removeUnit(host: InstallHost, name: string, actions: string[]): Promise<void> {
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
