// The wait an interrupted initialisation does before it exits: a killed process group counts as
// gone once only zombies are left, and a live one holds the wait until its timeout.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'

import {
  leftoverGroupMembers,
  processGroupAlive,
  waitForProcessGroupEndSync,
} from '../../../src/store/embedded/process-group.js'

describe('embedded: waiting for a killed process group', () => {
  it('sees a live group (a leader and its child), then none once SIGKILL ended it, zombies not counted', async () => {
    const leader = spawn('sh', ['-c', 'sleep 60 & wait'], { detached: true, stdio: 'ignore' })
    const pgid = leader.pid!
    try {
      assert.equal(processGroupAlive(pgid), true)
      assert.equal(waitForProcessGroupEndSync(pgid, 100), false, 'a live group holds the wait until its timeout')
      process.kill(-pgid, 'SIGKILL')
      // The leader is our child and stays a zombie until the event loop reaps it: not counted.
      assert.equal(waitForProcessGroupEndSync(pgid, 5000), true)
    } finally {
      try {
        process.kill(-pgid, 'SIGKILL')
      } catch {
        // gone
      }
    }
  })

  it("leftover members: a reaped leader's group with its children in it, never a group whose leader lives", async () => {
    const leader = spawn('sh', ['-c', 'sleep 60 & sleep 0.2'], { detached: true, stdio: 'ignore' })
    const pgid = leader.pid!
    try {
      assert.equal(leftoverGroupMembers(pgid), false, 'its leader runs: not leftovers (and maybe not ours once reaped)')
      await new Promise((resolve) => leader.once('exit', resolve))
      assert.equal(leftoverGroupMembers(pgid), true, 'the background sleep is left in the group')
    } finally {
      try {
        process.kill(-pgid, 'SIGKILL')
      } catch {
        // gone
      }
    }
    assert.equal(waitForProcessGroupEndSync(pgid, 5000), true)
    assert.equal(leftoverGroupMembers(pgid), false)
  })

  it('a group that never existed is gone', () => {
    assert.equal(processGroupAlive(2 ** 22 + 12345), false)
  })
})
