import assert from 'node:assert/strict'

import { parseSince } from '../../../src/lifecycle/view/fleet-events.js'
import { age } from '../../../src/lifecycle/view/fleet-table.js'
import { DEFAULT_THRESHOLDS, loadSweepThresholds } from '../../../src/lifecycle/node/thresholds.js'

describe('lifecycle: sweep thresholds, --since, ages', () => {
  it('defaults to 90 s unhealthy and 300 s lost; reads both variables', () => {
    assert.deepEqual(loadSweepThresholds({}), DEFAULT_THRESHOLDS)
    assert.deepEqual(loadSweepThresholds({ FLEETKIT_NODE_UNHEALTHY_AFTER: '20', FLEETKIT_NODE_LOST_AFTER: ' 60 ' }), {
      unhealthyAfterSeconds: 20,
      lostAfterSeconds: 60,
    })
  })

  it('refuses a lost threshold under 30 s, not above the unhealthy one, or not a number, naming the variable (exit 2)', () => {
    for (const [env, variable] of [
      [{ FLEETKIT_NODE_LOST_AFTER: '29' }, 'FLEETKIT_NODE_LOST_AFTER'],
      [{ FLEETKIT_NODE_UNHEALTHY_AFTER: '300', FLEETKIT_NODE_LOST_AFTER: '300' }, 'FLEETKIT_NODE_LOST_AFTER'],
      [{ FLEETKIT_NODE_UNHEALTHY_AFTER: '1m' }, 'FLEETKIT_NODE_UNHEALTHY_AFTER'],
      [{ FLEETKIT_NODE_UNHEALTHY_AFTER: '4' }, 'FLEETKIT_NODE_UNHEALTHY_AFTER'],
    ] as const) {
      assert.throws(
        () => loadSweepThresholds(env),
        (e: { code: string; exitCode: number; data: { variable: string } }) =>
          e.code === 'LIFECYCLE_CONFIG_INVALID' && e.exitCode === 2 && e.data.variable === variable,
      )
    }
  })

  it('--since takes a duration back from now or an ISO time; anything else is undefined', () => {
    const now = new Date('2026-12-01T12:00:00Z')
    assert.equal(parseSince('15m', now)?.toISOString(), '2026-12-01T11:45:00.000Z')
    assert.equal(parseSince('2d', now)?.toISOString(), '2026-11-29T12:00:00.000Z')
    assert.equal(parseSince('2026-11-30T00:00:00Z', now)?.toISOString(), '2026-11-30T00:00:00.000Z')
    assert.equal(parseSince('yesterday', now), undefined)
  })

  it('heartbeat ages read as seconds, minutes, hours, days', () => {
    assert.deepEqual([5, 119, 600, 7200, 200_000].map(age), ['5s', '119s', '10m', '2h', '2d'])
  })
})
