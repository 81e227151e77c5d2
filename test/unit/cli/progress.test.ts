import assert from 'node:assert/strict'

import { createProgress, formatElapsed, type ProgressTimers } from '../../../src/cli/progress.js'
import { fixedClock } from '../../../src/config/clock.js'

/** A terminal that records what was written, and timers the test fires by hand. */
function fakeTerminal(isTTY = true) {
  const writes: string[] = []
  const ticks = new Map<number, () => void>()
  let next = 0
  const timers: ProgressTimers = {
    setInterval: (callback) => {
      ticks.set(++next, callback)
      return next
    },
    clearInterval: (handle) => {
      ticks.delete(handle as number)
    },
  }
  return {
    stream: { isTTY, write: (chunk: string) => writes.push(chunk) },
    timers,
    writes,
    tick: () => {
      for (const callback of ticks.values()) callback()
    },
    running: () => ticks.size,
    /** The screen's lines as a terminal would show them after \r and clear-line. */
    screen: () =>
      writes
        .join('')
        .split('\n')
        .map((line) => line.split('\r\x1b[2K').at(-1)!),
  }
}

describe('cli: progress reporter', () => {
  it('on a terminal: one line per step, redrawn with the elapsed time, ended with ✔ or ✖', () => {
    const clock = fixedClock(new Date('2026-01-01T00:00:00Z'))
    const term = fakeTerminal()
    const progress = createProgress({ stream: term.stream, clock, timers: term.timers })
    assert.equal(progress.active, true)
    progress.step('rendering the inventory')
    clock.advance(400)
    progress.step('ansible-playbook --syntax-check: 4 playbooks')
    clock.advance(1_250)
    term.tick()
    assert.equal(term.screen().at(-1), '⠙ ansible-playbook --syntax-check: 4 playbooks (1.3s)')
    clock.advance(61_000)
    progress.fail()
    assert.deepEqual(term.screen(), [
      '✔ rendering the inventory (0.4s)',
      '✖ ansible-playbook --syntax-check: 4 playbooks (1m02s)',
      '',
    ])
    assert.equal(term.running(), 0, 'the redraw timer is stopped')
    progress.done()
    assert.equal(term.screen().length, 3, 'done() with no step running writes nothing')
  })

  it('writes nothing when stderr is not a terminal, or under --json', () => {
    for (const [isTTY, enabled] of [
      [false, true],
      [true, false],
    ] as const) {
      const term = fakeTerminal(isTTY)
      const progress = createProgress({ stream: term.stream, enabled, timers: term.timers })
      assert.equal(progress.active, false)
      progress.step('compressing')
      term.tick()
      progress.done()
      assert.deepEqual(term.writes, [])
      assert.equal(term.running(), 0)
    }
  })

  it('formats elapsed time in seconds, then minutes', () => {
    assert.equal(formatElapsed(0), '0.0s')
    assert.equal(formatElapsed(59_949), '59.9s')
    assert.equal(formatElapsed(125_000), '2m05s')
  })
})
