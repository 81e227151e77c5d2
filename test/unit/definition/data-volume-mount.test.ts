import assert from 'node:assert/strict'

import { dataVolumeMountsAllowed, reservedMountReason } from '../../../src/definition/rules/data-volume-mount.js'
import { ruleContext, validDefinition } from '../../support/definition-fixture.js'

describe('rule: data volume mount points are not reserved (DATA_VOLUME_MOUNT_RESERVED)', () => {
  it('accepts a directory of its own, and a service directory inside /var/lib or /var/log', () => {
    for (const ok of [
      '/srv/build',
      '/srv/data',
      '/data',
      '/mnt/volume-1',
      '/var/lib/postgresql',
      '/var/lib/docker',
      '/var/log/journal',
      '/var/lib/fleetkit-data',
      '/opt/builds',
      '/home/runner',
    ]) {
      assert.equal(reservedMountReason(ok), undefined, ok)
    }
    assert.deepEqual(dataVolumeMountsAllowed(ruleContext(validDefinition())), [])
  })

  it('refuses the root filesystem', () => {
    assert.match(reservedMountReason('/')!, /root filesystem/)
  })

  it("refuses fleetkit's own paths, what holds them and what sits inside them", () => {
    assert.match(reservedMountReason('/var/lib/fleetkit')!, /is fleetkit's own \/var\/lib\/fleetkit/)
    assert.match(reservedMountReason('/var/lib/fleetkit/work')!, /sits inside fleetkit's own \/var\/lib\/fleetkit/)
    assert.match(reservedMountReason('/etc/fleetkit/pki')!, /sits inside fleetkit's own \/etc\/fleetkit/)
    assert.match(reservedMountReason('/usr/local')!, /contains fleetkit's own \/usr\/local\/bin/)
    assert.match(reservedMountReason('/usr/local/bin')!, /is fleetkit's own \/usr\/local\/bin/)
    assert.match(reservedMountReason('/var')!, /contains fleetkit's own \/var\/lib\/fleetkit/)
  })

  it('refuses the system trees and anything inside them', () => {
    for (const tree of ['/etc', '/usr', '/boot', '/proc', '/sys', '/dev', '/run']) {
      assert.match(reservedMountReason(tree)!, new RegExp(`is the system's ${tree}$`), tree)
      assert.match(
        reservedMountReason(`${tree}/data`)!,
        new RegExp(`sits inside the system's ${tree}$`),
        `${tree}/data`,
      )
    }
    assert.match(reservedMountReason('/etc/ssh')!, /sits inside the system's \/etc/)
  })

  it('refuses /var/lib and /var/log themselves, and what holds them', () => {
    assert.match(reservedMountReason('/var/lib')!, /is the system's \/var\/lib/)
    assert.match(reservedMountReason('/var/log')!, /is the system's \/var\/log/)
  })

  it('refuses a path that is not absolute or not normalised, and names the normal form', () => {
    assert.match(reservedMountReason('srv/data')!, /not an absolute path/)
    assert.match(reservedMountReason('/srv/data/')!, /not normalised \(write \/srv\/data\)/)
    assert.match(reservedMountReason('/srv//data')!, /not normalised \(write \/srv\/data\)/)
    assert.match(reservedMountReason('/srv/./data')!, /not normalised/)
    assert.match(reservedMountReason('/srv/../etc')!, /not normalised \(write \/etc\)/)
    assert.match(reservedMountReason('/srv/..')!, /not normalised \(write \/\)/)
  })

  it("points at the node's mountPoint and keeps the value as actual", () => {
    const d = validDefinition()
    const index = d.nodes.findIndex((node) => node.dataVolume !== undefined)
    assert.ok(index >= 0)
    d.nodes[index]!.dataVolume!.mountPoint = '/etc/ssh'
    const errors = dataVolumeMountsAllowed(ruleContext(d))
    assert.deepEqual(
      errors.map((e) => [e.code, e.path, e.check, e.actual]),
      [['DATA_VOLUME_MOUNT_RESERVED', `/nodes/${index}/dataVolume/mountPoint`, 'definition:semantics', '/etc/ssh']],
    )
    assert.match(errors[0]!.message, new RegExp(`node "${d.nodes[index]!.id}" mounts its data volume at /etc/ssh`))
  })
})
