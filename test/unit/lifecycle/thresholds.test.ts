import assert from 'node:assert/strict'

import { parseSince } from '../../../src/lifecycle/view/fleet-events.js'
import { age } from '../../../src/lifecycle/view/fleet-table.js'
import { chooseManualThresholds } from '../../../src/lifecycle/node/manual-sweep.js'
import { DEFAULT_THRESHOLDS, loadSweepThresholds } from '../../../src/lifecycle/node/thresholds.js'
import type { SweepLease } from '../../../src/store/nodes/sweep-leader.js'

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

  it('a sweep by hand takes the recorded thresholds; a variable set here must agree, each on its own', () => {
    const readAt = new Date('2026-12-07T12:00:00Z')
    const lease: SweepLease = {
      holder: 'gw-1',
      acquiredAt: new Date('2026-12-07T11:00:00Z'),
      renewedAt: new Date('2026-12-07T11:59:58Z'),
      expiresAt: new Date('2026-12-07T12:00:08Z'),
      readAt,
      thresholds: { unhealthyAfterSeconds: 1800, lostAfterSeconds: 3600 },
    }
    const chosen = chooseManualThresholds(lease, {}, false)
    assert.deepEqual(chosen.thresholds, { unhealthyAfterSeconds: 1800, lostAfterSeconds: 3600 })
    assert.deepEqual(chosen.from, {
      source: 'gateway',
      recorded: {
        holder: 'gw-1',
        thresholds: { unhealthyAfterSeconds: 1800, lostAfterSeconds: 3600 },
        recordedAt: '2026-12-07T11:59:58.000Z',
        holdsLease: true,
      },
    })
    // The gateway's own unhealthy value alone agrees: not judged against the default lost threshold (300 s).
    assert.equal(
      chooseManualThresholds(lease, { FLEETKIT_NODE_UNHEALTHY_AFTER: '1800' }, false).thresholds.lostAfterSeconds,
      3600,
    )
    assert.throws(
      () =>
        chooseManualThresholds(lease, { FLEETKIT_NODE_UNHEALTHY_AFTER: '90', FLEETKIT_NODE_LOST_AFTER: '300' }, false),
      (e: { code: string; exitCode: number; message: string; data: Record<string, unknown> }) =>
        e.code === 'SWEEP_THRESHOLDS_DISAGREE' &&
        e.exitCode === 2 &&
        /FLEETKIT_NODE_UNHEALTHY_AFTER=90 FLEETKIT_NODE_LOST_AFTER=300/.test(e.message) &&
        /1800 s \/ 3600 s/.test(e.message) &&
        /the gateway that sweeps \(gw-1/.test(e.message),
    )
    // A value fleetkit cannot use is that, whatever a gateway recorded.
    assert.throws(() => chooseManualThresholds(lease, { FLEETKIT_NODE_LOST_AFTER: 'soon' }, false), {
      code: 'LIFECYCLE_CONFIG_INVALID',
    })
    const own = chooseManualThresholds({ ...lease, expiresAt: readAt }, { FLEETKIT_NODE_LOST_AFTER: '120' }, true)
    assert.deepEqual(own.thresholds, { unhealthyAfterSeconds: 90, lostAfterSeconds: 120 })
    assert.deepEqual([own.from.source, own.from.recorded?.holdsLease], ['environment', false])
    // A lease written before migration 0020 recorded nothing: the defaults, as before.
    const { thresholds: _none, ...unrecorded } = lease
    assert.deepEqual(chooseManualThresholds(unrecorded, {}, false), {
      thresholds: DEFAULT_THRESHOLDS,
      from: { source: 'defaults' },
    })
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
