import assert from 'node:assert/strict'

import { fixedClock, systemClock } from '../../../src/config/clock.js'
import { resolveStateDir } from '../../../src/config/state-dir.js'

describe('resolveStateDir', () => {
  const home = () => '/home/op'

  it('uses FLEETKIT_STATE_DIR first, made absolute', () => {
    assert.equal(resolveStateDir({ FLEETKIT_STATE_DIR: '/srv/fleet', XDG_STATE_HOME: '/x' }, home), '/srv/fleet')
    assert.equal(resolveStateDir({ FLEETKIT_STATE_DIR: 'rel/dir' }, home), `${process.cwd()}/rel/dir`)
  })

  it('falls back to $XDG_STATE_HOME/fleetkit, ignoring a relative XDG_STATE_HOME', () => {
    assert.equal(resolveStateDir({ XDG_STATE_HOME: '/var/state' }, home), '/var/state/fleetkit')
    assert.equal(resolveStateDir({ XDG_STATE_HOME: 'relative', HOME: '/home/x' }, home), '/home/x/.local/state/fleetkit')
  })

  it('falls back to ~/.local/state/fleetkit', () => {
    assert.equal(resolveStateDir({ HOME: '/home/x' }, home), '/home/x/.local/state/fleetkit')
    assert.equal(resolveStateDir({}, home), '/home/op/.local/state/fleetkit')
    assert.equal(resolveStateDir({ FLEETKIT_STATE_DIR: '  ' }, home), '/home/op/.local/state/fleetkit')
  })
})

describe('clocks', () => {
  it('a fixed clock moves only when told', () => {
    const clock = fixedClock(new Date('2026-01-01T00:00:00Z'))
    assert.equal(clock.now().toISOString(), '2026-01-01T00:00:00.000Z')
    clock.advance(1500)
    assert.equal(clock.now().toISOString(), '2026-01-01T00:00:01.500Z')
    clock.set(new Date('2027-01-01T00:00:00Z'))
    assert.equal(clock.now().getUTCFullYear(), 2027)
  })

  it('the system clock returns a Date', () => {
    assert.ok(systemClock.now() instanceof Date)
  })
})
