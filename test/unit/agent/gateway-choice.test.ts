// Which gateway an agent uses among several: a start spread by node ID, a move on failure, quick moves
// only until every gateway failed in a row, and jitter bounds.
import assert from 'node:assert/strict'

import { loadAgentConfig } from '../../../src/agent/config.js'
import {
  failoverDelayMs,
  failoverReason,
  GatewayChoice,
  startIndex,
  urlsFrom,
} from '../../../src/agent/gateway-choice.js'
import { seededRng } from '../../../src/config/rng.js'

const URLS = ['https://gw1:8443', 'https://gw2:8443', 'https://gw3:8443']

describe('GatewayChoice', () => {
  it('starts where the node ID says, the same each time, and spreads node IDs over the gateways', () => {
    const counts = [0, 0, 0]
    for (let i = 0; i < 3000; i++) counts[startIndex(`node-${i}`, 3)]!++
    for (const n of counts) assert.ok(n > 900 && n < 1100, `uneven: ${counts.join(', ')}`)
    assert.equal(new GatewayChoice(URLS, 'node-7').current, URLS[startIndex('node-7', 3)])
    assert.deepEqual(urlsFrom(URLS, 'node-7')[0], URLS[startIndex('node-7', 3)])
    assert.deepEqual([...urlsFrom(URLS, 'node-7')].sort(), [...URLS].sort())
  })

  it('moves to the next on each failure: quick while untried gateways remain, then not until a success', () => {
    const choice = new GatewayChoice(URLS, 'node-1')
    const start = choice.current
    const first = choice.failed()!
    assert.deepEqual([first.from, first.untried], [start, true])
    assert.equal(choice.failed()!.untried, true)
    const third = choice.failed()!
    assert.equal(third.untried, false, 'all three failed in a row: back off')
    assert.equal(third.to, start)
    assert.equal(choice.failed()!.untried, false)
    choice.succeeded()
    assert.equal(choice.failed()!.untried, true)
  })

  it('moves only on what another gateway can cure: no connection or a 502 to 504, never a 4xx, a 500 or a clock problem', () => {
    assert.equal(failoverReason({ failure: 'GATEWAY_UNREACHABLE' }), 'GATEWAY_UNREACHABLE')
    for (const status of [502, 503, 504]) assert.equal(failoverReason({ status }), `http_${status}`)
    // An answer: the same on every gateway (one database), or the agent's own problem.
    for (const status of [200, 204, 400, 401, 403, 404, 409, 413, 429, 500])
      assert.equal(failoverReason({ status }), undefined, `moved on ${status}`)
    for (const failure of ['CLOCK_SKEW', 'GATEWAY_CA_ROTATED', 'AGENT_CERTIFICATE_REJECTED'])
      assert.equal(failoverReason({ failure }), undefined, `moved on ${failure}`)
  })

  it('with one gateway there is nowhere to move', () => {
    assert.equal(new GatewayChoice([URLS[0]!], 'node-1').failed(), undefined)
  })

  it('waits a jittered 250 ms to 5 s (never more than a short heartbeat) before the next gateway', () => {
    const rng = seededRng('jitter')
    const waits = Array.from({ length: 200 }, () => failoverDelayMs(rng, 60_000))
    assert.ok(waits.every((w) => w >= 250 && w <= 5000))
    assert.ok(new Set(waits).size > 100, 'spread')
    assert.ok(Array.from({ length: 50 }, () => failoverDelayMs(rng, 1000)).every((w) => w <= 1000))
  })
})

describe('FLEETKIT_GATEWAY_URL and FLEETKIT_ENROLL_URL lists', () => {
  const load = (env: Record<string, string>) =>
    loadAgentConfig({ env: { FLEETKIT_AGENT_CONFIG: '/nonexistent', ...env }, flags: {}, readFile: () => '' })

  it('take one URL or several comma-separated, each once, the first as the single URL', () => {
    const config = load({ FLEETKIT_GATEWAY_URL: 'https://gw1:8443, https://gw2:8443,https://gw1:8443' })
    assert.deepEqual(config.gatewayUrls, ['https://gw1:8443', 'https://gw2:8443'])
    assert.equal(config.gatewayUrl, 'https://gw1:8443')
    assert.deepEqual(load({ FLEETKIT_ENROLL_URL: 'https://gw1:8444' }).enrollUrls, ['https://gw1:8444'])
    assert.deepEqual(load({}).gatewayUrls, [])
  })

  it('refuse a list with an entry that is not an https URL', () => {
    assert.throws(
      () => load({ FLEETKIT_GATEWAY_URL: 'https://gw1:8443,http://gw2:8443' }),
      (error: unknown) => (error as { code?: string }).code === 'AGENT_CONFIG_INVALID',
    )
  })
})
