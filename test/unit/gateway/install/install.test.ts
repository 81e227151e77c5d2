// `fleetkit gateway install` / `uninstall` against a stand-in machine: a recording runner for
// getent, groupadd, useradd and systemctl, a temp unit directory and a temp state directory (the
// ownership rules run for real: these tests chown, so they run as root, as the suite does).
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { chmod, chown, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

import { FleetkitError } from '../../../../src/checks/fleetkit-error.js'
import type { HostRunner, RunResult } from '../../../../src/gateway/install/host-runner.js'
import {
  installGatewayService,
  uninstallGatewayServiceOnMachine,
} from '../../../../src/gateway/install/gateway-service.js'
import { installGateway } from '../../../../src/gateway/install/install.js'
import type { InstallHost } from '../../../../src/gateway/install/install-host.js'
import { uninstallGatewayService } from '../../../../src/gateway/install/uninstall.js'
import { packagePath } from '../../../../src/package-root.js'
import { writeArchiveConfig } from '../../../../src/store/embedded/archive-dir.js'
import { removeArchiveRemote, writeArchiveRemote } from '../../../../src/store/embedded/archive-remote.js'
import { embeddedServerPaths } from '../../../../src/store/embedded/paths.js'

const ACCOUNT = { uid: 61001, gid: 61002 }

/** A machine: which accounts exist, each unit's state, and every command run. */
class FakeMachine {
  calls: string[] = []
  user = false
  group = false
  /** Units enabled and active, by name. */
  enabledUnits = new Set<string>()
  activeUnits = new Set<string>()
  fail: string | undefined
  /** Each command takes a moment, as a real one does: concurrent flows interleave between their commands. */
  slow = false
  /** The gateway unit's state, which most tests set. */
  set enabled(on: boolean) {
    if (on) this.enabledUnits.add('fleetkit-gateway.service')
    else this.enabledUnits.delete('fleetkit-gateway.service')
  }
  set active(on: boolean) {
    if (on) this.activeUnits.add('fleetkit-gateway.service')
    else this.activeUnits.delete('fleetkit-gateway.service')
  }
  run: HostRunner = async (file, args) => {
    const line = [file, ...args].join(' ')
    this.calls.push(line)
    if (this.slow) await new Promise((resolve) => setTimeout(resolve, 2))
    const ok = (stdout = ''): RunResult => ({ code: 0, stdout, stderr: '' })
    if (this.fail && line.startsWith(this.fail)) return { code: 1, stdout: '', stderr: `${file}: it broke\n` }
    if (file === 'getent' && args[0] === 'passwd')
      return this.user
        ? ok(`fleetkit-gateway:x:${ACCOUNT.uid}:${ACCOUNT.gid}::/var/lib/fleetkit:/usr/sbin/nologin\n`)
        : { code: 2, stdout: '', stderr: '' }
    if (file === 'getent' && args[0] === 'group')
      return this.group ? ok(`fleetkit-gateway:x:${ACCOUNT.gid}:\n`) : { code: 2, stdout: '', stderr: '' }
    if (file === 'groupadd') this.group = true
    if (file === 'useradd') this.user = true
    if (file === 'userdel') this.user = false
    if (file === 'groupdel') this.group = false
    if (file === 'systemctl') {
      const unit = args[args.length - 1]!
      const enabled = this.enabledUnits.has(unit)
      const active = this.activeUnits.has(unit)
      if (args[0] === 'is-enabled')
        return { code: enabled ? 0 : 1, stdout: enabled ? 'enabled\n' : 'disabled\n', stderr: '' }
      if (args[0] === 'is-active')
        return { code: active ? 0 : 3, stdout: active ? 'active\n' : 'inactive\n', stderr: '' }
      if (args[0] === 'enable') this.enabledUnits.add(unit)
      if (args[0] === 'start' || args[0] === 'restart') this.activeUnits.add(unit)
      if (args[0] === 'disable') {
        this.enabledUnits.delete(unit)
        this.activeUnits.delete(unit)
      }
    }
    return ok()
  }

  /** The commands that changed something (not the queries). */
  changes(): string[] {
    return this.calls.filter((c) => !/^getent |^systemctl is-/.test(c))
  }
}

/** An off-host archive remote as `db archive remote add` records it. */
const ARCHIVE_REMOTE = {
  url: 'ssh://archive@vault.example.net/srv/fleetkit-archive',
  user: 'archive',
  host: 'vault.example.net',
  port: 22,
  path: '/srv/fleetkit-archive',
  hostKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl',
  identityFile: '/etc/fleetkit/archive_ed25519',
  addedAt: '2026-12-06T21:00:00.000Z',
}

describe('gateway install: the flow on a stand-in machine', function () {
  this.timeout(30_000)
  let dir: string
  let machine: FakeMachine
  let server: { pid: number; uid: number } | undefined
  let host: InstallHost
  const command = [process.execPath, packagePath('bin', 'run.js')]

  beforeEach(async function () {
    assert.equal(process.getuid?.(), 0, 'these tests chown: run them as root')
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-install-'))
    await chmod(dir, 0o755)
    machine = new FakeMachine()
    server = undefined
    host = {
      uid: 0,
      run: machine.run,
      systemdRunning: true,
      unitDir: join(dir, 'etc-systemd-system'),
      template: await readFile(packagePath('systemd', 'fleetkit-gateway.service'), 'utf8'),
      reconcileTemplate: await readFile(packagePath('systemd', 'fleetkit-reconcile.service'), 'utf8'),
      archiveShipTemplate: await readFile(packagePath('systemd', 'fleetkit-archive-ship.service'), 'utf8'),
      archiveShipTimer: await readFile(packagePath('systemd', 'fleetkit-archive-ship.timer'), 'utf8'),
      runningServer: async () => server,
    }
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  async function refusal(promise: Promise<unknown>): Promise<FleetkitError> {
    const error = await promise.then(
      () => assert.fail('expected a refusal'),
      (e: unknown) => e,
    )
    assert.ok(error instanceof FleetkitError, String(error))
    return error
  }

  it('refuses a user other than root, naming sudo, and changes nothing', async () => {
    const error = await refusal(installGateway({ ...host, uid: 1000 }, { stateDir: join(dir, 'state'), command }))
    assert.equal(error.code, 'GATEWAY_INSTALL_NOT_ROOT')
    assert.match(error.message, /sudo fleetkit gateway install/)
    assert.deepEqual(machine.calls, [])
  })

  it('refuses a machine without systemd', async () => {
    const error = await refusal(
      installGateway({ ...host, systemdRunning: false }, { stateDir: join(dir, 'state'), command }),
    )
    assert.equal(error.code, 'GATEWAY_INSTALL_NO_SYSTEMD')
  })

  it('refuses a fleetkit the unit cannot see (ProtectHome) or another user cannot read', async () => {
    let error = await refusal(
      installGateway(host, { stateDir: join(dir, 'state'), command: [process.execPath, '/root/fleetkit/bin/run.js'] }),
    )
    assert.equal(error.code, 'GATEWAY_INSTALL_PATH_UNUSABLE')
    assert.match(error.message, /ProtectHome/)
    const hidden = join(dir, 'private')
    await mkdir(hidden, { mode: 0o700 })
    await writeFile(join(hidden, 'run.js'), '', { mode: 0o644 })
    error = await refusal(
      installGateway(host, { stateDir: join(dir, 'state'), command: [process.execPath, join(hidden, 'run.js')] }),
    )
    assert.equal(error.code, 'GATEWAY_INSTALL_PATH_UNUSABLE')
    assert.match(error.message, /private is mode 0700/)
    assert.deepEqual(machine.changes(), [])
  })

  it('refuses a state directory that is not one of its own: everything under it goes to the account', async () => {
    const { symlink } = await import('node:fs/promises')
    await mkdir(join(dir, 'real'))
    await symlink(join(dir, 'real'), join(dir, 'link'))
    for (const [stateDir, why] of [
      ['/', /top-level/],
      ['/srv', /top-level/],
      ['/var/lib', /system directory/],
      ['/etc/fleetkit', /lies under \/etc/],
      ['/home/op/state', /ProtectHome/],
      [join(dir, 'link'), /symbolic link/],
    ] as const) {
      const error = await refusal(installGateway(host, { stateDir, command }))
      assert.equal(error.code, 'GATEWAY_INSTALL_PATH_UNUSABLE', stateDir)
      assert.match(error.message, why)
    }
    assert.deepEqual(machine.changes(), [])
  })

  it("refuses while the state's server runs as another account (root's state: postgres)", async () => {
    server = { pid: 4242, uid: 999 }
    const error = await refusal(installGateway(host, { stateDir: join(dir, 'state'), command }))
    assert.equal(error.code, 'GATEWAY_INSTALL_SERVER_RUNNING')
    assert.match(error.message, /fleetkit db stop/)
    assert.deepEqual(machine.changes(), [])
  })

  it('installs: account, shared state, unit, enable, start; a second run changes nothing', async () => {
    const stateDir = join(dir, 'state')
    const first = await installGateway(host, { stateDir, command })
    assert.equal(first.changed, true)
    assert.deepEqual(machine.changes(), [
      'groupadd --system fleetkit-gateway',
      `useradd --system --gid fleetkit-gateway --home-dir ${stateDir} --no-create-home --shell /usr/sbin/nologin --comment fleetkit gateway fleetkit-gateway`,
      'systemctl daemon-reload',
      'systemctl enable fleetkit-gateway.service',
      'systemctl start fleetkit-gateway.service',
    ])
    const unit = await readFile(first.unitPath, 'utf8')
    assert.match(unit, new RegExp(`^ExecStart=${command.join(' ')} gateway serve$`, 'm'))
    assert.match(unit, new RegExp(`^ReadWritePaths=${stateDir}$`, 'm'))
    assert.equal((await stat(first.unitPath)).mode & 0o777, 0o644)
    const info = await stat(stateDir)
    assert.deepEqual([info.uid, info.gid, info.mode & 0o7777], [ACCOUNT.uid, ACCOUNT.gid, 0o2770])
    assert.equal(first.next, 'systemctl status fleetkit-gateway')

    machine.calls = []
    const second = await installGateway(host, { stateDir, command })
    assert.equal(second.changed, false)
    assert.deepEqual(second.actions, [])
    assert.deepEqual(machine.changes(), [])
  })

  it('lets the unit write the WAL archive when it lies outside the state (ProtectSystem=strict)', async () => {
    const stateDir = join(dir, 'state')
    const archiveDir = join(dir, 'backups', 'fleetkit-wal')
    await mkdir(join(stateDir, 'postgres'), { recursive: true })
    await writeArchiveConfig(embeddedServerPaths(stateDir), { dir: archiveDir, enabledAt: '2026-12-06T21:00:00.000Z' })
    const first = await installGateway(host, { stateDir, command })
    assert.match(await readFile(first.unitPath, 'utf8'), new RegExp(`^ReadWritePaths=${stateDir} -${archiveDir}$`, 'm'))
    // An archive inside the state is covered by the state's own entry.
    await writeArchiveConfig(embeddedServerPaths(stateDir), {
      dir: join(stateDir, 'archive'),
      enabledAt: '2026-12-06T21:00:00.000Z',
    })
    const second = await installGateway(host, { stateDir, command })
    assert.match(await readFile(second.unitPath, 'utf8'), new RegExp(`^ReadWritePaths=${stateDir}$`, 'm'))
  })

  it("gives the account the WAL archive outside the state and the archive's SSH key; --remove-account gives them back", async () => {
    const stateDir = join(dir, 'state')
    const archiveDir = join(dir, 'backups', 'fleetkit-wal')
    const key = join(dir, 'etc-fleetkit', 'archive_ed25519')
    // As root's state left them: the archive written by postgres (999), the key root's own.
    await mkdir(join(archiveDir, 'wal'), { recursive: true, mode: 0o700 })
    await writeFile(join(archiveDir, 'wal', '000000010000000000000001'), 'segment')
    await chown(archiveDir, 999, 999)
    await chown(join(archiveDir, 'wal'), 999, 999)
    await chown(join(archiveDir, 'wal', '000000010000000000000001'), 999, 999)
    await mkdir(dirname(key), { recursive: true })
    await writeFile(key, 'not a real key\n', { mode: 0o600 })
    await mkdir(join(stateDir, 'postgres'), { recursive: true })
    await writeArchiveConfig(embeddedServerPaths(stateDir), { dir: archiveDir, enabledAt: '2026-12-06T21:00:00.000Z' })
    await writeArchiveRemote(embeddedServerPaths(stateDir), { ...ARCHIVE_REMOTE, identityFile: key })
    const owners = async () =>
      Promise.all(
        [archiveDir, join(archiveDir, 'wal', '000000010000000000000001'), key].map(async (p) => {
          const info = await stat(p)
          return [info.uid, info.gid, info.mode & 0o777]
        }),
      )
    const first = await installGateway(host, { stateDir, command })
    assert.ok(
      first.actions.some((a) => /WAL archive outside the state and the archive's SSH key \(4 path/.test(a)),
      first.actions.join('\n'),
    )
    assert.deepEqual(await owners(), [
      [ACCOUNT.uid, ACCOUNT.gid, 0o700],
      [ACCOUNT.uid, ACCOUNT.gid, 0o644],
      [ACCOUNT.uid, ACCOUNT.gid, 0o600],
    ])
    machine.calls = []
    const second = await installGateway(host, { stateDir, command })
    assert.equal(second.changed, false, second.actions.join('\n'))

    await uninstallGatewayService(host, {
      stateDir,
      removeAccount: true,
      postgresAccount: async () => ({ uid: 999, gid: 999 }),
      record: async () => undefined,
      serverRunning: async () => false,
      stopServer: async () => undefined,
    })
    assert.deepEqual(await owners(), [
      [999, 999, 0o700],
      [999, 999, 0o644],
      [0, 0, 0o600],
    ])
  })

  it('refuses an archive SSH key the unit hides (ProtectHome=yes), before changing anything', async () => {
    const stateDir = join(dir, 'state')
    await mkdir(join(stateDir, 'postgres'), { recursive: true })
    await writeArchiveRemote(embeddedServerPaths(stateDir), {
      ...ARCHIVE_REMOTE,
      identityFile: '/root/.ssh/id_ed25519',
    })
    const error = await refusal(installGateway(host, { stateDir, command }))
    assert.equal(error.code, 'GATEWAY_INSTALL_PATH_UNUSABLE')
    assert.match(error.message, /\/root\/\.ssh\/id_ed25519 is under a directory the unit hides/)
    assert.deepEqual(machine.changes(), [])
  })

  it("takes over root's state and says so; a changed unit is rewritten and the service restarted", async () => {
    const stateDir = join(dir, 'state')
    await mkdir(join(stateDir, 'postgres', 'data'), { recursive: true, mode: 0o700 })
    await writeFile(join(stateDir, 'postgres', 'password'), 'x\n', { mode: 0o600 })
    await chown(join(stateDir, 'postgres', 'data'), 999, 999)
    machine.user = true
    machine.group = true
    machine.enabled = true
    machine.active = true
    await mkdir(host.unitDir, { recursive: true })
    await writeFile(join(host.unitDir, 'fleetkit-gateway.service'), 'the old hand-made unit\n')
    const result = await installGateway(host, { stateDir, command })
    assert.equal(result.tookOver, true)
    assert.ok(
      result.actions.some((a) =>
        /^took over .*root's state.* now belong to fleetkit-gateway:fleetkit-gateway$/.test(a),
      ),
      result.actions.join('\n'),
    )
    assert.deepEqual(machine.changes(), ['systemctl daemon-reload', 'systemctl restart fleetkit-gateway.service'])
    const data = await stat(join(stateDir, 'postgres', 'data'))
    assert.deepEqual([data.uid, data.mode & 0o7777], [ACCOUNT.uid, 0o750])
    assert.equal((await stat(join(stateDir, 'postgres', 'password'))).mode & 0o777, 0o640)
  })

  it('reports a failing system command with its output, and a re-run finishes the work', async () => {
    machine.fail = 'systemctl enable'
    const error = await refusal(installGateway(host, { stateDir: join(dir, 'state'), command }))
    assert.equal(error.code, 'GATEWAY_INSTALL_FAILED')
    assert.match(error.message, /systemctl enable fleetkit-gateway.service failed: systemctl: it broke/)
    machine.fail = undefined
    machine.calls = []
    const result = await installGateway(host, { stateDir: join(dir, 'state'), command })
    assert.deepEqual(machine.changes(), [
      'systemctl enable fleetkit-gateway.service',
      'systemctl start fleetkit-gateway.service',
    ])
    assert.equal(result.changed, true)
  })

  it('--with-reconcile: the reconcile unit beside the gateway, after it; a second run changes nothing; alone on an installed gateway', async () => {
    const stateDir = join(dir, 'state')
    const first = await installGateway(host, { stateDir, command, withReconcile: true })
    assert.deepEqual(machine.changes().slice(-6), [
      'systemctl daemon-reload',
      'systemctl enable fleetkit-gateway.service',
      'systemctl start fleetkit-gateway.service',
      'systemctl daemon-reload',
      'systemctl enable fleetkit-reconcile.service',
      'systemctl start fleetkit-reconcile.service',
    ])
    assert.equal(first.reconcileUnitPath, join(host.unitDir, 'fleetkit-reconcile.service'))
    assert.equal(first.next, 'systemctl status fleetkit-gateway fleetkit-reconcile')
    const unit = await readFile(first.reconcileUnitPath, 'utf8')
    assert.match(unit, new RegExp(`^ExecStart=${command.join(' ')} reconcile$`, 'm'))
    assert.match(unit, /^User=fleetkit-gateway$/m)
    assert.match(unit, new RegExp(`^Environment=FLEETKIT_STATE_DIR=${stateDir}$`, 'm'))
    assert.match(unit, /^After=network-online.target fleetkit-gateway.service$/m)
    machine.calls = []
    const second = await installGateway(host, { stateDir, command, withReconcile: true })
    assert.equal(second.changed, false)
    assert.deepEqual(machine.changes(), [])

    // A gateway installed without it gets it on a later run with the flag, and only it.
    const other = join(dir, 'other-units')
    const plain = { ...host, unitDir: other }
    await installGateway(plain, { stateDir, command })
    machine.activeUnits.delete('fleetkit-reconcile.service')
    machine.enabledUnits.delete('fleetkit-reconcile.service')
    machine.calls = []
    const added = await installGateway(plain, { stateDir, command, withReconcile: true })
    assert.equal(added.changed, true)
    assert.deepEqual(machine.changes(), [
      'systemctl daemon-reload',
      'systemctl enable fleetkit-reconcile.service',
      'systemctl start fleetkit-reconcile.service',
    ])

    // Uninstall stops and removes the reconcile unit first: it uses the gateway's database.
    machine.calls = []
    await uninstallGatewayService(host, {
      stateDir,
      removeAccount: false,
      postgresAccount: async () => ({ uid: 999, gid: 999 }),
      record: async () => undefined,
      serverRunning: async () => true,
      stopServer: async () => undefined,
    })
    assert.deepEqual(machine.changes(), [
      'systemctl disable --now fleetkit-reconcile.service',
      'systemctl daemon-reload',
      'systemctl disable --now fleetkit-gateway.service',
      'systemctl daemon-reload',
    ])
  })

  it('ships on a timer once the state has an off-host remote; a second run changes nothing; uninstall removes it', async () => {
    const stateDir = join(dir, 'state')
    await mkdir(join(stateDir, 'postgres'), { recursive: true })
    const plain = await installGateway(host, { stateDir, command })
    assert.equal(plain.archiveShipTimerPath, null, 'no remote: no timer')
    assert.ok(!machine.changes().some((c) => c.includes('archive-ship')))

    // `db archive remote add` (as root, on the shared state) recorded a remote: the next install adds the timer, and only it.
    await writeArchiveRemote(embeddedServerPaths(stateDir), ARCHIVE_REMOTE)
    machine.calls = []
    const first = await installGateway(host, { stateDir, command })
    assert.equal(first.archiveShipTimerPath, join(host.unitDir, 'fleetkit-archive-ship.timer'))
    assert.deepEqual(machine.changes(), [
      'systemctl daemon-reload',
      'systemctl daemon-reload',
      'systemctl enable fleetkit-archive-ship.timer',
      'systemctl start fleetkit-archive-ship.timer',
    ])
    const service = await readFile(join(host.unitDir, 'fleetkit-archive-ship.service'), 'utf8')
    assert.match(service, new RegExp(`^ExecStart=${command.join(' ')} db archive ship$`, 'm'))
    assert.match(service, /^User=fleetkit-gateway$/m)
    assert.match(service, /^Type=oneshot$/m)
    assert.match(service, new RegExp(`^Environment=FLEETKIT_STATE_DIR=${stateDir}$`, 'm'))
    assert.match(await readFile(first.archiveShipTimerPath!, 'utf8'), /^Unit=fleetkit-archive-ship.service$/m)
    machine.calls = []
    const second = await installGateway(host, { stateDir, command })
    assert.equal(second.changed, false)
    assert.deepEqual(machine.changes(), [])

    machine.calls = []
    await uninstallGatewayService(host, {
      stateDir,
      removeAccount: false,
      postgresAccount: async () => ({ uid: 999, gid: 999 }),
      record: async () => undefined,
      serverRunning: async () => true,
      stopServer: async () => undefined,
    })
    assert.deepEqual(machine.changes(), [
      'systemctl disable --now fleetkit-archive-ship.timer',
      'systemctl daemon-reload',
      'systemctl daemon-reload',
      'systemctl disable --now fleetkit-gateway.service',
      'systemctl daemon-reload',
    ])
    assert.ok(!existsSync(join(host.unitDir, 'fleetkit-archive-ship.service')))
    assert.ok(!existsSync(first.archiveShipTimerPath!))
  })

  it('a remote removed (`db archive remote remove`): the next install stops and removes the timer and its service', async () => {
    const stateDir = join(dir, 'state')
    await mkdir(join(stateDir, 'postgres'), { recursive: true })
    const paths = embeddedServerPaths(stateDir)
    await writeArchiveRemote(paths, ARCHIVE_REMOTE)
    const shipping = await installGateway(host, { stateDir, command })
    assert.ok(shipping.archiveShipTimerPath && existsSync(shipping.archiveShipTimerPath))
    await removeArchiveRemote(paths)
    machine.calls = []
    const after = await installGateway(host, { stateDir, command })
    assert.equal(after.archiveShipTimerPath, null)
    assert.equal(after.changed, true)
    assert.deepEqual(machine.changes(), [
      'systemctl disable --now fleetkit-archive-ship.timer',
      'systemctl daemon-reload',
      'systemctl daemon-reload',
    ])
    assert.ok(!existsSync(shipping.archiveShipTimerPath))
    assert.ok(!existsSync(join(host.unitDir, 'fleetkit-archive-ship.service')))
    assert.ok(existsSync(after.unitPath), 'the gateway itself stays')
    machine.calls = []
    assert.equal((await installGateway(host, { stateDir, command })).changed, false)
    assert.deepEqual(machine.changes(), [])
  })

  it('uninstalls: stops, disables and removes the unit, keeps state and account, records an event', async () => {
    const stateDir = join(dir, 'state')
    await installGateway(host, { stateDir, command })
    machine.calls = []
    const recorded: string[] = []
    const flow = {
      stateDir,
      removeAccount: false,
      postgresAccount: async () => ({ uid: 999, gid: 999 }),
      record: async (r: { actions: string[] }) => {
        recorded.push(r.actions.join('; '))
      },
      serverRunning: async () => true,
      stopServer: async () => undefined,
    }
    const result = await uninstallGatewayService(host, flow)
    assert.deepEqual(machine.changes(), ['systemctl disable --now fleetkit-gateway.service', 'systemctl daemon-reload'])
    assert.equal(result.stateKept, true)
    assert.equal(result.accountRemoved, false)
    assert.equal(recorded.length, 1)
    assert.equal(machine.user, true)
    assert.equal((await stat(stateDir)).uid, ACCOUNT.uid)
    await assert.rejects(stat(result.unitPath))

    machine.calls = []
    const again = await uninstallGatewayService(host, flow)
    assert.equal(again.changed, false)
    assert.deepEqual(machine.changes(), [])
    assert.equal(recorded.length, 1)

    const removed = await uninstallGatewayService(host, { ...flow, removeAccount: true })
    assert.equal(removed.accountRemoved, true)
    assert.deepEqual(machine.changes(), ['userdel fleetkit-gateway', 'groupdel fleetkit-gateway'])
    const info = await stat(stateDir)
    assert.deepEqual([info.uid, info.mode & 0o7777], [0, 0o700])
  })

  describe('two operators at once', () => {
    const RUNS = 20

    function service(stateDir: string, recorded: string[]) {
      return {
        // A database URL: the flow records its event through withPool without waiting for an embedded server.
        env: { DATABASE_URL: 'postgres://unused', FLEETKIT_STATE_DIR: stateDir },
        host,
        command,
        withPool: <T>(_work: (pool: never) => Promise<T>): Promise<T> => {
          recorded.push('event')
          return Promise.resolve(undefined as T)
        },
        lock: { path: join(dir, 'install.lock'), pollMs: 2 },
      }
    }

    it('without the lock the race is real: concurrent installs each create the account', async () => {
      machine.slow = true
      const stateDir = join(dir, 'state')
      await Promise.allSettled(Array.from({ length: RUNS }, () => installGateway(host, { stateDir, command })))
      assert.ok(machine.calls.filter((c) => c.startsWith('useradd')).length > 1, machine.changes().join('\n'))
    })

    it(`of ${RUNS} concurrent installs one acts, the others find it done; of ${RUNS} uninstalls one acts`, async () => {
      machine.slow = true
      const stateDir = join(dir, 'state')
      const recorded: string[] = []
      const installs = await Promise.all(
        Array.from({ length: RUNS }, () => installGatewayService(service(stateDir, recorded))),
      )
      assert.equal(installs.filter((r) => r.changed).length, 1)
      assert.deepEqual(machine.changes(), [
        'groupadd --system fleetkit-gateway',
        `useradd --system --gid fleetkit-gateway --home-dir ${stateDir} --no-create-home --shell /usr/sbin/nologin --comment fleetkit gateway fleetkit-gateway`,
        'systemctl daemon-reload',
        'systemctl enable fleetkit-gateway.service',
        'systemctl start fleetkit-gateway.service',
      ])
      assert.equal(recorded.length, 1, 'one gateway_installed event')

      machine.calls = []
      recorded.length = 0
      const uninstalls = await Promise.all(
        Array.from({ length: RUNS }, () =>
          uninstallGatewayServiceOnMachine({ ...service(stateDir, recorded), removeAccount: false }),
        ),
      )
      assert.equal(uninstalls.filter((r) => r.changed).length, 1)
      assert.deepEqual(machine.changes(), [
        'systemctl disable --now fleetkit-gateway.service',
        'systemctl daemon-reload',
      ])
      assert.equal(recorded.length, 1, 'one gateway_uninstalled event')
    })

    it('a holder that outlasts the wait is GATEWAY_INSTALL_BUSY, with nothing changed', async () => {
      const lock = join(dir, 'install.lock')
      // A live process of ours holds it: this test's parent, alive for the whole test.
      await writeFile(lock, `${process.ppid} ${Date.now()} held\n`)
      const error = await refusal(
        installGatewayService({ ...service(join(dir, 'state'), []), lock: { path: lock, timeoutMs: 50, pollMs: 5 } }),
      )
      assert.equal(error.code, 'GATEWAY_INSTALL_BUSY')
      // EX_TEMPFAIL, as docs/runbooks.md says: a script that retries on 75 retries an install too.
      assert.equal(error.exitCode, 75)
      assert.match(error.message, new RegExp(`PID ${process.ppid}`))
      assert.deepEqual(machine.changes(), [])
    })

    it('a user who may not install is refused before the lock, never waiting for it', async () => {
      const lock = join(dir, 'install.lock')
      await writeFile(lock, `${process.ppid} ${Date.now()} held\n`)
      const error = await refusal(
        installGatewayService({
          ...service(join(dir, 'state'), []),
          host: { ...host, uid: 1000 },
          lock: { path: lock, timeoutMs: 60_000 },
        }),
      )
      assert.equal(error.code, 'GATEWAY_INSTALL_NOT_ROOT')
    })
  })
})
