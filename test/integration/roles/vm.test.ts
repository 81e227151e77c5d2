// What only a real kernel and disk show, on ONE VM host booted once: br_netfilter loaded by the
// role (modprobe) and still loaded after a reboot; the data disk formatted XFS once, mounted by
// UUID, still mounted after the reboot and never reformatted; a disk with another filesystem refused.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { type Inventory, type VmHost, assertHostsAvailable, startVmHost, writeInventory } from '../../hosts/index.js'
import { TEST_HARNESS_VARS, runRoles, tail, writeRolePlaybook } from './role-runs.js'

const MOUNT = '/srv/fleetkit'

describe('roles: br_netfilter and data_volume on a VM host (modprobe, a real disk, a reboot)', function () {
  let vm: VmHost
  let dir: string
  let inventory: Inventory
  let playbook: string
  // The VM has 1 GiB of memory, below the production minimum: size is the one check left out.
  const vars = () => ({ ...TEST_HARNESS_VARS, preflight_enforce_size: false, data_volume_device: '/dev/vdb', data_volume_mount_point: MOUNT })
  const run = (extra: Record<string, unknown> = {}, check = false) =>
    runRoles({ inventory, playbook, extraVars: { ...vars(), ...extra }, check, diff: check })

  before(async () => {
    await assertHostsAvailable('vm')
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-role-vm-'))
    vm = await startVmHost({ name: 'roles-vm', dataDiskMb: 512 })
    inventory = await writeInventory([vm], join(dir, 'inventory'))
    playbook = await writeRolePlaybook(dir, 'kernel-and-disk', ['br_netfilter', 'data_volume'])
  })

  after(async () => {
    await vm?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('check on the fresh VM neither fails nor loads the module nor formats the disk', async () => {
    assert.equal((await vm.ssh('grep -q "^br_netfilter " /proc/modules')).code, 1, 'br_netfilter was loaded before the role ran')
    const check = await run({}, true)
    assert.equal(check.code, 0, tail(check))
    assert.equal((await vm.ssh('grep -q "^br_netfilter " /proc/modules')).code, 1, 'check mode loaded the module')
    assert.equal((await vm.ssh('blkid -p /dev/vdb')).code, 2, 'check mode formatted the disk')
  })

  it('converge loads br_netfilter and mounts the XFS disk by UUID; a second run changes nothing', async () => {
    const converge = await run()
    assert.equal(converge.code, 0, tail(converge))
    const again = await run()
    assert.equal(again.code, 0, tail(again))
    assert.equal(again.recap[vm.name]?.changed, 0, tail(again, 80))
    assert.equal((await vm.ssh('grep -q "^br_netfilter " /proc/modules')).code, 0)
    assert.equal((await vm.sshOk('sysctl -n net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables')).stdout, '1\n1\n')
    assert.equal((await vm.sshOk(`findmnt -n -o FSTYPE ${MOUNT}`)).stdout.trim(), 'xfs')
    const uuid = (await vm.sshOk('blkid -p -o value -s UUID /dev/vdb')).stdout.trim()
    assert.match((await vm.sshOk(`systemctl cat "$(systemd-escape -p --suffix=mount ${MOUNT})"`)).stdout, new RegExp(`^What=/dev/disk/by-uuid/${uuid}$`, 'm'))
    await vm.sshOk(`echo kept > ${MOUNT}/marker`)
  })

  it('after a reboot the module is loaded, the sysctls are 1, the volume is mounted with its data, and nothing changes', async () => {
    const uuid = (await vm.sshOk('blkid -p -o value -s UUID /dev/vdb')).stdout.trim()
    await vm.reboot()
    assert.equal((await vm.ssh('grep -q "^br_netfilter " /proc/modules')).code, 0, 'br_netfilter not loaded at boot')
    assert.equal((await vm.sshOk('sysctl -n net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables')).stdout, '1\n1\n')
    assert.equal((await vm.sshOk(`findmnt -n -o SOURCE,FSTYPE ${MOUNT}`)).stdout.trim().split(/\s+/)[1], 'xfs')
    assert.equal((await vm.sshOk(`cat ${MOUNT}/marker`)).stdout, 'kept\n')
    assert.equal((await vm.sshOk('blkid -p -o value -s UUID /dev/vdb')).stdout.trim(), uuid)
    const after = await run()
    assert.equal(after.code, 0, tail(after))
    assert.equal(after.recap[vm.name]?.changed, 0, tail(after, 80))
    assert.equal((await vm.sshOk('blkid -p -o value -s UUID /dev/vdb')).stdout.trim(), uuid, 'the disk was reformatted')
  })

  it('refuses a disk that holds another filesystem (ext4 on a loop device) with DATA_VOLUME_FOREIGN_FS', async () => {
    const device = (await vm.sshOk('truncate -s 64M /root/foreign.img && mkfs.ext4 -q -F /root/foreign.img && losetup -f --show /root/foreign.img')).stdout.trim()
    const refused = await run({ data_volume_device: device, data_volume_mount_point: '/srv/foreign' })
    assert.notEqual(refused.code, 0)
    assert.match(refused.stdout, new RegExp(`DATA_VOLUME_FOREIGN_FS: ${device} holds ext4, not xfs`))
    assert.equal((await vm.sshOk(`blkid -p -o value -s TYPE ${device}`)).stdout.trim(), 'ext4')
  })
})
