import assert from 'node:assert/strict'
import { readFile, mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { CALLS_LOG_ENV, prepareMachineRoot, writeStubCommands } from '../../../src/demo/machine.js'
import { overlayEnv, runProcess } from '../../support/process.js'

describe('demo machine: the stub commands and the state a converged host has', () => {
  let dir: string

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-demo-machine-'))
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('puts a logging stub for each command that needs a real machine first on PATH', async () => {
    const bin = join(dir, 'bin')
    const calls = join(dir, 'calls.log')
    const names = await writeStubCommands(bin)
    for (const name of ['apt-get', 'systemctl', 'modprobe', 'nft', 'sysctl', 'useradd', 'chown', 'runuser'])
      assert.ok(names.includes(name), name)
    const env = overlayEnv({ PATH: `${bin}:${process.env.PATH}`, [CALLS_LOG_ENV]: calls })
    const run = (line: string) => runProcess('bash', ['-c', line], { env })

    const active = await run('systemctl is-active fleetkit-agent.service')
    assert.deepEqual([active.code, active.stdout], [0, 'active\n'])
    assert.equal((await run('systemctl is-enabled fleetkit-agent.service')).stdout, 'enabled\n')
    assert.equal((await run('nft list table inet fleetkit')).code, 0)
    assert.equal((await run('apt-get install -y nodejs')).code, 0)
    // The simulated machine has no account yet; another id call is the real one.
    assert.equal((await run('id -u fleetkit-agent')).code, 1)
    assert.equal((await run('id -u')).stdout.trim(), String(process.getuid!()))
    // runuser runs the command, as this user.
    assert.equal((await run('runuser -u fleetkit-agent -- echo ran')).stdout, 'ran\n')
    const log = await readFile(calls, 'utf8')
    assert.match(log, /^systemctl is-active fleetkit-agent\.service$/m)
    assert.match(log, /^nft list table inet fleetkit$/m)
    assert.match(log, /^apt-get install -y nodejs$/m)
    assert.match(log, /^runuser -u fleetkit-agent -- echo ran$/m)
  })

  it('lays down the bridge sysctls, the data volume as xfs and this machine’s facts under the root', async () => {
    const root = join(dir, 'root')
    await prepareMachineRoot(root, '/srv/build data')
    assert.equal(await readFile(join(root, 'proc/sys/net/bridge/bridge-nf-call-iptables'), 'utf8'), '1\n')
    assert.equal(await readFile(join(root, 'proc/sys/net/bridge/bridge-nf-call-ip6tables'), 'utf8'), '1\n')
    assert.match(await readFile(join(root, 'proc/self/mounts'), 'utf8'), /^\/dev\/sdb \/srv\/build\\040data xfs /m)
    assert.ok((await stat(join(root, 'srv/build data'))).isDirectory())
    assert.equal(
      await readFile(join(root, 'proc/sys/kernel/osrelease'), 'utf8'),
      await readFile('/proc/sys/kernel/osrelease', 'utf8'),
    )
  })

  it('lists no data volume for a node that declares none', async () => {
    const root = join(dir, 'root-no-volume')
    await prepareMachineRoot(root, '')
    assert.equal(await readFile(join(root, 'proc/self/mounts'), 'utf8'), 'sysfs /sys sysfs rw 0 0\n')
  })
})
