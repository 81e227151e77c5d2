// data_volume on a real container host with a loop-device data disk: formatted XFS once, mounted
// by a systemd mount unit, never reformatted; a disk with another filesystem is refused. A container
// runs no udev, so /dev/disk/by-uuid is empty there: the default data_volume_mount_source (auto) mounts the
// device path. Mounting by UUID and the reboot are in the VM end to end (test/integration/hosts/vm-agent-seed.test.ts).
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import {
  type ContainerHost,
  type Inventory,
  assertHostsAvailable,
  startContainerHosts,
  writeInventory,
} from '../../hosts/index.js'
import { TEST_HARNESS_VARS, checkConvergeIdempotent, runRoles, tail, writeRolePlaybook } from './role-runs.js'

const MOUNT = '/srv/fleetkit-data'

describe('roles: data_volume on a container host', function () {
  let fresh: ContainerHost
  let foreign: ContainerHost
  let dir: string
  let playbook: string

  before(async () => {
    await assertHostsAvailable('container')
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-role-data-'))
    const started = await startContainerHosts(2, { name: 'datavol', dataDisk: { sizeMb: 320 } })
    fresh = started[0]!
    foreign = started[1]!
    playbook = await writeRolePlaybook(dir, 'data_volume', ['data_volume'])
  })

  after(async () => {
    await Promise.all([fresh?.stop(), foreign?.stop()])
    await rm(dir, { recursive: true, force: true })
  })

  const varsOf = (host: ContainerHost) => ({
    data_volume_device: host.dataDisk,
    data_volume_mount_point: MOUNT,
  })

  it('check leaves the empty disk alone; converge formats and mounts it; a second run changes nothing', async () => {
    const inventory: Inventory = await writeInventory([fresh], join(dir, 'fresh'))
    await checkConvergeIdempotent({
      inventory,
      playbook,
      hosts: [fresh.name],
      extraVars: varsOf(fresh),
      verifyUntouched: async () => {
        assert.equal((await fresh.ssh(`blkid -p ${fresh.dataDisk}`)).code, 2, 'check mode formatted the disk')
      },
    })
    const uuid = (await fresh.sshOk(`blkid -p -o value -s UUID ${fresh.dataDisk}`)).stdout.trim()
    assert.match(uuid, /^[0-9a-f-]{36}$/)
    const unit = (await fresh.sshOk(`systemd-escape -p --suffix=mount ${MOUNT}`)).stdout.trim()
    assert.equal(unit, 'srv-fleetkit\\x2ddata.mount')
    const unitText = (await fresh.sshOk(`cat '/etc/systemd/system/${unit}'`)).stdout
    // auto: no udev control socket in a container, so the device path and not a by-uuid link that never comes.
    assert.match(unitText, new RegExp(`^What=${fresh.dataDisk}$`, 'm'))
    assert.match(unitText, /mounted by its device path \(no udev on this host\)/)
    assert.match(unitText, new RegExp(`UUID ${uuid}`))
    assert.equal((await fresh.sshOk(`systemctl is-enabled '${unit}'`)).stdout.trim(), 'enabled')
    assert.equal((await fresh.sshOk(`findmnt -n -o FSTYPE ${MOUNT}`)).stdout.trim(), 'xfs')

    // Never reformatted: a file written on the volume survives another run with the same UUID.
    await fresh.sshOk(`echo kept > ${MOUNT}/marker`)
    const again = await runRoles({ inventory, playbook, extraVars: { ...TEST_HARNESS_VARS, ...varsOf(fresh) } })
    assert.equal(again.code, 0, tail(again))
    assert.equal(again.recap[fresh.name]?.changed, 0)
    assert.equal((await fresh.sshOk(`cat ${MOUNT}/marker`)).stdout, 'kept\n')
    assert.equal((await fresh.sshOk(`blkid -p -o value -s UUID ${fresh.dataDisk}`)).stdout.trim(), uuid)
  })

  it('refuses a disk that holds another filesystem with DATA_VOLUME_FOREIGN_FS and leaves it as it was', async () => {
    await foreign.sshOk(`mkfs.ext4 -q -F ${foreign.dataDisk}`)
    const before = (await foreign.sshOk(`blkid -p -o value -s UUID ${foreign.dataDisk}`)).stdout
    const inventory = await writeInventory([foreign], join(dir, 'foreign'))
    const run = await runRoles({ inventory, playbook, extraVars: { ...TEST_HARNESS_VARS, ...varsOf(foreign) } })
    assert.notEqual(run.code, 0)
    assert.match(run.stdout, new RegExp(`DATA_VOLUME_FOREIGN_FS: ${foreign.dataDisk} holds ext4, not xfs`))
    assert.equal(run.recap[foreign.name]?.changed, 0)
    assert.equal((await foreign.sshOk(`blkid -p -o value -s UUID ${foreign.dataDisk}`)).stdout, before)
  })

  it('refuses a device that is not there with DATA_VOLUME_DEVICE_MISSING', async () => {
    const inventory = await writeInventory([foreign], join(dir, 'missing'))
    const run = await runRoles({
      inventory,
      playbook,
      extraVars: { ...TEST_HARNESS_VARS, data_volume_device: '/dev/fleetkit-nothing', data_volume_mount_point: MOUNT },
    })
    assert.notEqual(run.code, 0)
    assert.match(run.stdout, /DATA_VOLUME_DEVICE_MISSING: \/dev\/fleetkit-nothing is not a block device/)
  })
})
