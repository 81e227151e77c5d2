import assert from 'node:assert/strict'

import {
  RENEW_EARLIEST_FRACTION,
  RENEW_LATEST_FRACTION,
  lifetimeLeft,
  nextRenewalCheckAt,
  plannedRenewalAt,
  renewalDecision,
  urgentRenewalAt,
} from '../../../src/agent/renewal-schedule.js'
import { seededRng, unitIntervalSequence } from '../../../src/config/rng.js'

const notBefore = new Date('2026-01-01T00:00:00Z')
const DAY = 86_400_000
const window = { notBefore, notAfter: new Date(notBefore.getTime() + DAY) }
const at = (fraction: number) => new Date(notBefore.getTime() + DAY * fraction)

describe('agent renewal schedule', () => {
  it('plans the renewal at 2/3 of the lifetime for rng 0 and just under 85% for rng near 1', () => {
    assert.equal(plannedRenewalAt(window, unitIntervalSequence([0])).getTime(), at(2 / 3).getTime())
    const latest = plannedRenewalAt(window, unitIntervalSequence([0.999999])).getTime()
    assert.ok(latest <= at(0.85).getTime() && latest > at(0.849).getTime())
  })

  it('keeps every jittered point between 2/3 and 85% and spreads them over the window', () => {
    const rng = seededRng('42')
    const fractions = Array.from(
      { length: 10_000 },
      () => (plannedRenewalAt(window, rng).getTime() - notBefore.getTime()) / DAY,
    )
    for (const f of fractions)
      assert.ok(f >= RENEW_EARLIEST_FRACTION && f <= RENEW_LATEST_FRACTION, `fraction ${f} out of bounds`)
    // 10,000 agents enrolled together: no tenth of the window holds more than 15% of them.
    const buckets = new Array(10).fill(0)
    for (const f of fractions)
      buckets[
        Math.min(
          9,
          Math.floor(((f - RENEW_EARLIEST_FRACTION) / (RENEW_LATEST_FRACTION - RENEW_EARLIEST_FRACTION)) * 10),
        )
      ]++
    for (const count of buckets) assert.ok(count < 1500, `bucket holds ${count}`)
  })

  it('waits before the planned point, is due from it, and is urgent past 90%', () => {
    const planned = at(0.8)
    assert.equal(renewalDecision(at(0.5), window, planned), 'wait')
    assert.equal(renewalDecision(at(0.79), window, planned), 'wait')
    assert.equal(renewalDecision(at(0.8), window, planned), 'due')
    assert.equal(renewalDecision(at(0.89), window, planned), 'due')
    assert.equal(renewalDecision(at(0.9), window, planned), 'urgent')
    // Past 90% the renewal happens at once even if the planned point were later.
    assert.equal(renewalDecision(at(0.91), window, at(0.99)), 'urgent')
    assert.equal(urgentRenewalAt(window).getTime(), at(0.9).getTime())
  })

  it('checks every interval but never later than the 90% point, and retries soon past it', () => {
    const tenMinutes = 600_000
    assert.equal(nextRenewalCheckAt(at(0.1), window, tenMinutes).getTime(), at(0.1).getTime() + tenMinutes)
    // A check interval longer than the time to 90% is cut to land on 90%.
    assert.equal(nextRenewalCheckAt(at(0.89), window, DAY).getTime(), at(0.9).getTime())
    assert.equal(nextRenewalCheckAt(at(0.95), window, tenMinutes).getTime(), at(0.95).getTime() + 30_000)
    assert.equal(nextRenewalCheckAt(at(0.95), window, 5_000).getTime(), at(0.95).getTime() + 5_000)
  })

  it('reports the fraction of the lifetime left', () => {
    assert.equal(lifetimeLeft(at(0.25), window), 0.75)
    assert.ok(lifetimeLeft(at(1.5), window) < 0)
  })
})
