// eventually(): polls until a value, a stop reason or the deadline; tested on a fake clock, so no test waits.
import assert from 'node:assert/strict'

import { eventually } from '../../support/eventually.js'

/** A clock that moves only when the helper sleeps. */
function fakeTime() {
  let now = 0
  const slept: number[] = []
  return {
    now: () => now,
    sleep: async (ms: number) => {
      slept.push(ms)
      now += ms
    },
    slept,
  }
}

describe('eventually()', () => {
  it('returns the first value that is neither undefined nor false, pausing between probes', async () => {
    const time = fakeTime()
    const answers = [undefined, false, 0, 7]
    const value = await eventually('a value', () => answers.shift(), { ...time, intervalMs: 50 })
    assert.equal(value, 0, 'zero is a value')
    assert.deepEqual(time.slept, [50, 50])
  })

  it("times out naming what it waited for and the probe's last error", async () => {
    const time = fakeTime()
    await assert.rejects(
      eventually(
        'the heartbeat',
        async () => {
          throw new Error('connection refused')
        },
        { ...time, timeoutMs: 1000, intervalMs: 100 },
      ),
      { message: 'timed out waiting for the heartbeat (last probe: connection refused)' },
    )
    assert.equal(time.now(), 1000)
  })

  it('gives up at once when the stop condition gives a reason', async () => {
    const time = fakeTime()
    let probes = 0
    await assert.rejects(
      eventually(
        'a renewal',
        () => {
          probes++
          return undefined
        },
        { ...time, stop: () => (probes >= 2 ? 'the agent exited (1)' : undefined) },
      ),
      { message: 'the agent exited (1) while waiting for a renewal' },
    )
    assert.equal(probes, 2)
  })
})
