// The VM hosts of test/hosts/, for real: QEMU (software emulation) boots the golden rootfs's own
// kernel from a NoCloud seed, has a second virtio disk, reaches only the forwards the test named,
// survives reboot(), and stop() ends it by PID and removes its disks.
import assert from 'node:assert/strict'
import { existsSync, readdirSync } from 'node:fs'
import { createServer, type Server } from 'node:net'

import { alive } from '../../hosts/pids.js'
import { GUEST_HOST_ADDRESS, type VmHost, assertHostsAvailable, goldenImage, startVmHost } from '../../hosts/index.js'


describe('test hosts: a VM (QEMU)', function () {
  this.timeout(900_000)
  let vm: VmHost
  let echo: Server
  let echoPort: number

  before(async () => {
    await assertHostsAvailable('vm')
    // A service on this machine the guest reaches through a guestfwd at 10.0.2.100.
    echo = createServer((socket) => socket.end('hello from the machine\n'))
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve))
    echoPort = (echo.address() as { port: number }).port
    vm = await startVmHost({
      name: 'vm1',
      seed: { userData: '#!/bin/bash\necho "seeded by a script" > /etc/fleetkit-test-seed\n' },
      dataDiskMb: 256,
      guestForwards: [{ guestPort: 8443, hostPort: echoPort }],
    })
  })

  after(async () => {
    await vm?.stop()
    echo?.close()
  })

  it('boots its own kernel from the rootfs, ran the seed script through cloud-init, and is pinned by its host key', async () => {
    const { kernel } = await goldenImage()
    const out = (await vm.sshOk('uname -r; systemd-detect-virt; hostname; cat /etc/fleetkit-test-seed; test -e /var/lib/cloud/instance/boot-finished && echo finished')).stdout.split('\n')
    assert.equal(out[0], kernel.replace(/^.*vmlinuz-/, ''))
    assert.equal(out[1], 'qemu')
    assert.equal(out[2], 'vm1')
    assert.equal(out[3], 'seeded by a script')
    assert.equal(out[4], 'finished')
    assert.equal((await vm.sshOk('cat /etc/ssh/ssh_host_ed25519_key.pub')).stdout.split(' ')[1], vm.hostPublicKey.split(' ')[1])
  })

  it('has a data disk at /dev/vdb and a real kernel (modprobe br_netfilter works)', async () => {
    assert.equal((await vm.sshOk(`lsblk -bno SIZE ${vm.dataDisk}`)).stdout.trim(), String(256 * 1024 * 1024))
    await vm.sshOk('modprobe br_netfilter && test -d /proc/sys/net/bridge')
  })

  it('reaches a forwarded port of this machine at 10.0.2.100 and nothing else', async () => {
    const reached = await vm.sshOk(`timeout 10 bash -c 'exec 3<>/dev/tcp/${GUEST_HOST_ADDRESS}/8443; cat <&3'`)
    assert.equal(reached.stdout, 'hello from the machine\n')
    const outside = await vm.ssh('timeout 5 bash -c "exec 3<>/dev/tcp/1.1.1.1/443" && echo connected')
    assert.doesNotMatch(outside.stdout, /connected/)
  })

  it('survives reboot(): ssh answers again on a new boot, with what it wrote', async () => {
    await vm.sshOk('echo kept > /root/kept && sync')
    const before = (await vm.sshOk('cat /proc/sys/kernel/random/boot_id')).stdout
    await vm.reboot()
    const after = (await vm.sshOk('cat /proc/sys/kernel/random/boot_id; cat /root/kept')).stdout.split('\n')
    assert.notEqual(after[0], before.trim())
    assert.equal(after[1], 'kept')
  })

  it('stop() ends QEMU by PID and removes its disks', async () => {
    const { qemuPid, dir } = vm
    await vm.stop()
    assert.equal(alive(qemuPid), false)
    assert.equal(existsSync(dir), false)
    assert.equal(readdirSync('/tmp').some((f) => dir.endsWith(f)), false)
  })
})
