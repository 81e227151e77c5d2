import assert from 'node:assert/strict'

import { fixedClock, systemClock } from '../../../src/config/clock.js'
import { resolveStateDir } from '../../../src/config/state-dir.js'

describe('resolveStateDir', () => {
  const home = () => '/home/op'

  it('uses FLEETKIT_STATE_DIR first, made absolute', () => {
    assert.equal(resolveStateDir({ FLEETKIT_STATE_DIR: '/srv/fleet', XDG_STATE_HOME: '/x' }, home), '/srv/fleet')
    assert.equal(resolveStateDir({ FLEETKIT_STATE_DIR: 'rel/dir' }, home), `${process.cwd()}/rel/dir`)
  })

  const user = 1000

  it('falls back to $XDG_STATE_HOME/fleetkit, ignoring a relative XDG_STATE_HOME', () => {
    assert.equal(resolveStateDir({ XDG_STATE_HOME: '/var/state' }, home, user), '/var/state/fleetkit')
    assert.equal(
      resolveStateDir({ XDG_STATE_HOME: 'relative', HOME: '/home/x' }, home, user),
      '/home/x/.local/state/fleetkit',
    )
  })

  it('falls back to ~/.local/state/fleetkit', () => {
    assert.equal(resolveStateDir({ HOME: '/home/x' }, home, user), '/home/x/.local/state/fleetkit')
    assert.equal(resolveStateDir({}, home, user), '/home/op/.local/state/fleetkit')
    assert.equal(resolveStateDir({ FLEETKIT_STATE_DIR: '  ' }, home, user), '/home/op/.local/state/fleetkit')
  })

  it('uses /var/lib/fleetkit for root, whose home the postgres user cannot enter', () => {
    assert.equal(
      resolveStateDir({ HOME: '/root' }, () => '/root', 0),
      '/var/lib/fleetkit',
    )
    assert.equal(
      resolveStateDir({ HOME: '/root', FLEETKIT_STATE_DIR: '/srv/s' }, () => '/root', 0),
      '/srv/s',
    )
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
