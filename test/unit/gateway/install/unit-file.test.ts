// The unit `fleetkit gateway install` writes: the shipped template with this fleetkit's ExecStart,
// the account, and the state directory it may write; systemd-analyze verify accepts it.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

import { runningCliCommand } from '../../../../src/gateway/install/install-host.js'
import {
  renderArchiveShipUnit,
  renderGatewayUnit,
  renderReconcileUnit,
  unitPathProblem,
} from '../../../../src/gateway/install/unit-file.js'
import { packagePath } from '../../../../src/package-root.js'

const run = promisify(execFile)

function directives(unit: string): Map<string, string[]> {
  const map = new Map<string, string[]>()
  for (const line of unit.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line)
    if (m) map.set(m[1]!, [...(map.get(m[1]!) ?? []), m[2]!])
  }
  return map
}

describe('gateway install: the unit it renders', function () {
  this.timeout(60_000)
  let template: string
  before(async () => {
    template = await readFile(packagePath('systemd', 'fleetkit-gateway.service'), 'utf8')
  })
  const command = ['/opt/node/bin/node', '/usr/lib/node_modules/fleetkit/bin/run.js']

  it('runs this fleetkit as the account on the given state, which alone it may write', () => {
    const unit = directives(
      renderGatewayUnit(template, {
        command,
        stateDir: '/var/lib/fleetkit',
        user: 'fleetkit-gateway',
        group: 'fleetkit-gateway',
      }),
    )
    assert.deepEqual(unit.get('ExecStart'), [`${command.join(' ')} gateway serve`])
    assert.deepEqual(unit.get('ExecStopPost'), [`-${command.join(' ')} db stop`])
    assert.deepEqual(unit.get('User'), ['fleetkit-gateway'])
    assert.deepEqual(unit.get('Group'), ['fleetkit-gateway'])
    assert.deepEqual(unit.get('ProtectSystem'), ['strict'])
    assert.deepEqual(unit.get('ReadWritePaths'), ['/var/lib/fleetkit'])
    assert.deepEqual(unit.get('Environment'), ['FLEETKIT_STATE_DIR=/var/lib/fleetkit'])
    // The server started by the gateway lives in the unit's cgroup: SIGTERM to the gateway alone, then db stop.
    assert.deepEqual(unit.get('KillMode'), ['mixed'])
    assert.equal(unit.get('StateDirectory'), undefined)
    // The template's hardening is kept whole.
    for (const key of [
      'NoNewPrivileges',
      'ProtectHome',
      'PrivateTmp',
      'CapabilityBoundingSet',
      'UMask',
      'LimitNOFILE',
    ]) {
      assert.deepEqual(unit.get(key), directives(template).get(key), key)
    }
  })

  it('quotes a path with a space, doubles %, and refuses what systemd would read otherwise', () => {
    const unit = renderGatewayUnit(template, {
      command: ['/opt/my node/node', '/srv/100%/run.js'],
      stateDir: '/srv/fleet state',
      user: 'u',
      group: 'g',
    })
    assert.match(unit, /^ExecStart="\/opt\/my node\/node" \/srv\/100%%\/run\.js gateway serve$/m)
    assert.match(unit, /^ReadWritePaths="\/srv\/fleet state"$/m)
    const archived = renderGatewayUnit(template, {
      command,
      stateDir: '/var/lib/fleetkit',
      user: 'u',
      group: 'g',
      archiveDir: '/mnt/wal archive',
    })
    // `-`: a missing archive directory does not keep the gateway from starting.
    assert.match(archived, /^ReadWritePaths=\/var\/lib\/fleetkit "-\/mnt\/wal archive"$/m)
    assert.equal(unitPathProblem('relative/run.js'), 'is not absolute')
    for (const bad of ['/a"b', '/a\\b', '/a$HOME', '/a\nb']) assert.ok(unitPathProblem(bad), bad)
    assert.equal(unitPathProblem('/usr/bin/node'), undefined)
  })

  it('fails loudly on a template that lacks a line it must set', () => {
    assert.throws(
      () =>
        renderGatewayUnit(template.replace(/^ReadWritePaths=.*$/m, ''), {
          command,
          stateDir: '/s',
          user: 'u',
          group: 'g',
        }),
      /lacks ReadWritePaths/,
    )
  })

  it('passes systemd-analyze verify with the running fleetkit in ExecStart', async function () {
    const which = await run('sh', ['-c', 'command -v systemd-analyze']).catch(() => undefined)
    assert.ok(which, "systemd-analyze is missing: install Debian's systemd package (scripts/install-test-deps)")
    const dir = await mkdtemp(join(tmpdir(), 'fleetkit-install-unit-'))
    try {
      const running = runningCliCommand([process.execPath, packagePath('bin', 'run.js')])
      const unit = renderGatewayUnit(template, {
        command: running,
        stateDir: dir,
        user: 'fleetkit-gateway',
        group: 'fleetkit-gateway',
      })
      await writeFile(join(dir, 'fleetkit-gateway.service'), unit)
      const { stdout, stderr } = await run('systemd-analyze', ['verify', join(dir, 'fleetkit-gateway.service')])
      assert.equal(`${stdout}${stderr}`.trim(), '', 'no warnings')
      // The reconcile unit beside it (gateway install --with-reconcile).
      const reconcile = renderReconcileUnit(
        await readFile(packagePath('systemd', 'fleetkit-reconcile.service'), 'utf8'),
        { command: running, stateDir: dir, user: 'fleetkit-gateway', group: 'fleetkit-gateway' },
      )
      assert.match(reconcile, new RegExp(`^ExecStart=${running.join(' ')} reconcile$`, 'm'))
      await writeFile(join(dir, 'fleetkit-reconcile.service'), reconcile)
      const verified = await run('systemd-analyze', ['verify', join(dir, 'fleetkit-reconcile.service')])
      assert.equal(`${verified.stdout}${verified.stderr}`.trim(), '', 'no warnings')
      // The shipping service and its timer (a state with an off-host remote), verified together.
      const ship = renderArchiveShipUnit(
        await readFile(packagePath('systemd', 'fleetkit-archive-ship.service'), 'utf8'),
        { command: running, stateDir: dir, user: 'fleetkit-gateway', group: 'fleetkit-gateway' },
      )
      assert.match(ship, new RegExp(`^ExecStart=${running.join(' ')} db archive ship$`, 'm'))
      await writeFile(join(dir, 'fleetkit-archive-ship.service'), ship)
      await writeFile(
        join(dir, 'fleetkit-archive-ship.timer'),
        await readFile(packagePath('systemd', 'fleetkit-archive-ship.timer'), 'utf8'),
      )
      const timer = await run('systemd-analyze', [
        'verify',
        join(dir, 'fleetkit-archive-ship.service'),
        join(dir, 'fleetkit-archive-ship.timer'),
      ])
      assert.equal(`${timer.stdout}${timer.stderr}`.trim(), '', 'no warnings')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
