// The gateway's systemd unit (systemd/fleetkit-gateway.service): systemd-analyze verify accepts
// it, it runs as its own user with a descriptor limit far above 1,024, and it is hardened at
// least like the agent's unit (cloud-init/fleetkit-agent.service.tmpl).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

import { packagePath } from '../../../src/package-root.js'

const run = promisify(execFile)

function directives(unit: string): Map<string, string> {
  const map = new Map<string, string>()
  for (const line of unit.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line.trim())
    if (m) map.set(m[1]!, m[2]!)
  }
  return map
}

describe('gateway: the systemd unit', function () {
  this.timeout(60_000)
  const unitPath = packagePath('systemd', 'fleetkit-gateway.service')

  it('passes systemd-analyze verify', async function () {
    const which = await run('sh', ['-c', 'command -v systemd-analyze']).catch(() => undefined)
    assert.ok(which, "systemd-analyze is missing: install Debian's systemd package (scripts/install-test-deps)")
    const dir = await mkdtemp(join(tmpdir(), 'fleetkit-unit-'))
    try {
      // verify checks that ExecStart's binary exists: point it at a stand-in with the same arguments.
      const standIn = join(dir, 'fleetkit')
      await writeFile(standIn, '#!/bin/sh\nexit 0\n')
      await chmod(standIn, 0o755)
      const unit = (await readFile(unitPath, 'utf8')).replace('ExecStart=/usr/bin/fleetkit ', `ExecStart=${standIn} `)
      assert.ok(unit.includes(`ExecStart=${standIn} gateway serve`))
      await writeFile(join(dir, 'fleetkit-gateway.service'), unit)
      const { stdout, stderr } = await run('systemd-analyze', ['verify', join(dir, 'fleetkit-gateway.service')])
      assert.equal(`${stdout}${stderr}`.trim(), '', 'no warnings')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('runs as its own user, raises LimitNOFILE and is hardened at least like the agent', async () => {
    const gateway = directives(await readFile(unitPath, 'utf8'))
    const agent = directives(await readFile(packagePath('cloud-init', 'fleetkit-agent.service.tmpl'), 'utf8'))
    assert.equal(gateway.get('User'), 'fleetkit-gateway')
    assert.ok(Number(gateway.get('LimitNOFILE')) >= 65536)
    assert.equal(gateway.get('KillSignal'), 'SIGTERM')
    const hardening = [...agent.keys()].filter(
      (k) =>
        /^(Protect|Private|Restrict|NoNewPrivileges|LockPersonality|CapabilityBoundingSet|AmbientCapabilities|SystemCallArchitectures|UMask)/.test(
          k,
        ) && k !== 'RestrictAddressFamilies',
    )
    assert.ok(hardening.length >= 15)
    for (const key of hardening) assert.equal(gateway.get(key), agent.get(key), `${key} as in the agent's unit`)
    // The gateway needs no netlink (the agent reads interfaces); only IP and Unix sockets.
    assert.equal(gateway.get('RestrictAddressFamilies'), 'AF_INET AF_INET6 AF_UNIX')
  })
})
