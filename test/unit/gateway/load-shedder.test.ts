// The load shedder's rules without a socket: levels rise at once and fall one at a time after calm
// samples (hysteresis), each priority's share of the in-flight limit, and the coded 503 it throws.
import assert from 'node:assert/strict'

import type { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { jitteredRetryMs } from '../../../src/agent/backoff.js'
import { unitIntervalSequence } from '../../../src/config/rng.js'
import { errorReply } from '../../../src/gateway/routes/http.js'
import { DEFAULT_LOAD_SHEDDER_TUNING, LoadShedder } from '../../../src/gateway/load/load-shedder.js'

function shedderWith(delays: number[], maxInFlight = { enroll: 10, agent: 10 }) {
  let i = 0
  const levels: [number, number][] = []
  const shed: string[] = []
  const shedder = new LoadShedder({
    tuning: { ...DEFAULT_LOAD_SHEDDER_TUNING, calmSamples: 2, maxInFlight },
    delayMs: () => delays[Math.min(i++, delays.length - 1)]!,
    onLevel: (level, previous) => levels.push([previous, level]),
    onShed: (listener, priority, reason) => shed.push(`${listener}:${priority}:${reason}`),
  })
  return { shedder, levels, shed }
}

function refusal(fn: () => unknown): FleetkitError {
  try {
    fn()
  } catch (error) {
    return error as FleetkitError
  }
  assert.fail('admitted')
}

describe('load shedder', () => {
  it('rises straight to the level a delay reaches and falls one level per run of calm samples', () => {
    const { shedder, levels } = shedderWith([20, 2400, 1200, 900, 900, 200, 200, 60, 60])
    assert.deepEqual([shedder.sample(), shedder.sample()], [0, 3])
    // 1200 ms: below the level-3 threshold but not below half of it: stays.
    assert.equal(shedder.sample(), 3)
    assert.deepEqual([shedder.sample(), shedder.sample()], [3, 2])
    assert.deepEqual([shedder.sample(), shedder.sample()], [2, 1])
    assert.deepEqual([shedder.sample(), shedder.sample()], [1, 0])
    assert.deepEqual(levels, [
      [0, 3],
      [3, 2],
      [2, 1],
      [1, 0],
    ])
  })

  it('a busy sample in a calm run starts the run again', () => {
    const { shedder } = shedderWith([200, 10, 100, 10, 10])
    assert.equal(shedder.sample(), 1)
    assert.equal(shedder.sample(), 1)
    assert.equal(shedder.sample(), 1, '100 ms is not under half of 150 ms: the calm run restarts')
    assert.equal(shedder.sample(), 1)
    assert.equal(shedder.sample(), 0)
  })

  it('sheds enrollment at level 1, leases at 2, heartbeats only at 3', () => {
    const { shedder, shed } = shedderWith([200, 600, 2000])
    shedder.sample()
    assert.equal(refusal(() => shedder.admit('enroll', 'first')).code, 'GATEWAY_OVERLOADED')
    shedder.admit('agent', 'normal')()
    shedder.admit('agent', 'last')()
    shedder.sample()
    refusal(() => shedder.admit('agent', 'normal'))
    shedder.admit('agent', 'last')()
    shedder.sample()
    refusal(() => shedder.admit('agent', 'last'))
    assert.deepEqual(shed, [
      'enroll:first:event_loop_delay',
      'agent:normal:event_loop_delay',
      'agent:last:event_loop_delay',
    ])
  })

  it('in flight: enrollment may fill half the limit, leases 80%, heartbeats all of it; release frees a slot once', () => {
    const { shedder } = shedderWith([0], { enroll: 10, agent: 10 })
    const held = Array.from({ length: 5 }, () => shedder.admit('agent', 'first'))
    assert.equal(refusal(() => shedder.admit('agent', 'first')).data?.reason, 'in_flight')
    held.push(shedder.admit('agent', 'normal'), shedder.admit('agent', 'normal'), shedder.admit('agent', 'normal'))
    refusal(() => shedder.admit('agent', 'normal'))
    held.push(shedder.admit('agent', 'last'), shedder.admit('agent', 'last'))
    refusal(() => shedder.admit('agent', 'last'))
    assert.equal(shedder.inFlightOf('agent'), 10)
    held[0]!()
    held[0]!()
    assert.equal(shedder.inFlightOf('agent'), 9)
    // The other listener has its own count.
    shedder.admit('enroll', 'first')()
  })

  it('answers 503 gateway_overloaded with Retry-After by priority and the reason in the body', () => {
    const { shedder } = shedderWith([5000])
    shedder.sample()
    const first = errorReply(refusal(() => shedder.admit('enroll', 'first')))
    assert.equal(first.status, 503)
    assert.deepEqual(first.headers, { 'retry-after': '10' })
    assert.equal(first.body.reason, 'event_loop_delay')
    assert.equal((first.body.error as { code: string }).code, 'gateway_overloaded')
    assert.deepEqual(errorReply(refusal(() => shedder.admit('agent', 'last'))).headers, { 'retry-after': '2' })
  })

  it('the agent waits Retry-After plus up to half of it (at least a second) of jitter', () => {
    const now = Date.now()
    assert.equal(jitteredRetryMs('10', 1, now, unitIntervalSequence([0])), 10_000)
    assert.equal(jitteredRetryMs('10', 1, now, unitIntervalSequence([0.999999])), 15_000)
    assert.equal(jitteredRetryMs('0', 1, now, unitIntervalSequence([0.5])), 500)
    assert.equal(jitteredRetryMs(undefined, 3, now, unitIntervalSequence([0])), 8000)
  })
})
