// fleetkit's Ansible speed settings: forks bounded by the controller's cores and the hosts, the free
// strategy unless the command asks for linear, mitogen only where it is installed.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { describeSpeed, forksFor, speedSettings } from '../../../src/sync/ansible-phase.js'

describe('sync speed settings', () => {
  it('never forks more workers than hosts, at least Ansible default 5, at most 4 per core', () => {
    assert.equal(forksFor(1, 2), 1)
    assert.equal(forksFor(3, 2), 3)
    assert.equal(forksFor(10, 2), 8)
    assert.equal(forksFor(50, 2), 8)
    assert.equal(forksFor(50, 1), 5)
    assert.equal(forksFor(50, 8), 32)
    assert.equal(forksFor(500, 64), 100)
  })

  it('runs the free strategy unless told linear, named after mitogen when it is installed', () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'fleetkit-speed-'))
    try {
      const mitogenDir = stateDir
      const free = speedSettings({ targets: 10, noMitogen: false, stateDir, mitogenDir, cores: 2 })
      assert.equal(free.strategy, 'free')
      assert.equal(free.forks, 8)
      assert.match(describeSpeed(free), /^strategy mitogen_free \(ansible-mitogen\), forks 8, pipelining on/)
      const linear = speedSettings({
        targets: 10,
        noMitogen: true,
        strategy: 'linear',
        stateDir,
        mitogenDir,
        cores: 2,
      })
      assert.equal(linear.strategy, 'linear')
      assert.match(describeSpeed(linear), /^strategy linear \(ssh\), forks 8/)
      const missing = speedSettings({
        targets: 2,
        noMitogen: false,
        stateDir,
        mitogenDir: join(stateDir, 'absent'),
      })
      assert.match(describeSpeed(missing), /^strategy free \(ssh\), forks 2/)
    } finally {
      rmSync(stateDir, { recursive: true, force: true })
    }
  })
})
