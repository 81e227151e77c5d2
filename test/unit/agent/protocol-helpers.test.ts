import assert from 'node:assert/strict'

import { SKEW_FAIL_MS, skewStatus, timeRelatedTlsFailure } from '../../../src/agent/clock-skew.js'
import { joinBundles, retryAfterMs } from '../../../src/agent/enroll.js'
import { skewFrom } from '../../../src/agent/gateway-client.js'
import { jobHeartbeatIntervalMs } from '../../../src/agent/jobs.js'

const cert = (body: string) => `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----`

describe('agent protocol helpers', () => {
  it("measures skew as the gateway's server_time minus our clock at the request's midpoint", () => {
    const started = Date.parse('2026-01-01T00:00:00.000Z')
    assert.equal(skewFrom({ server_time: '2026-01-01T00:00:10.050Z' }, started, started + 100), 10_000)
    assert.equal(skewFrom({ server_time: 'yesterday' }, started, started), undefined)
    assert.equal(skewFrom({}, started, started), undefined)
    assert.equal(skewStatus(5), 'pass')
    assert.equal(skewStatus(-15_000), 'warn')
    assert.equal(skewStatus(-SKEW_FAIL_MS), 'fail')
    assert.equal(skewStatus(undefined), 'warn')
  })

  it('recognises the TLS failures a wrong clock causes, not a refused connection', () => {
    for (const code of [
      'CERT_NOT_YET_VALID',
      'CERT_HAS_EXPIRED',
      'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
      'ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED',
      'ECONNRESET',
    ])
      assert.ok(timeRelatedTlsFailure(code), code)
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT']) assert.ok(!timeRelatedTlsFailure(code), code)
  })

  it('reads Retry-After in seconds or as a date, and backs off without one', () => {
    assert.equal(retryAfterMs('3', 1), 3000)
    assert.equal(retryAfterMs(['7'], 1), 7000)
    assert.equal(retryAfterMs('99999', 1), 300_000)
    assert.equal(retryAfterMs(undefined, 2), 4000)
    assert.equal(retryAfterMs(undefined, 20), 60_000)
    assert.ok(retryAfterMs(new Date(Date.now() + 5000).toUTCString(), 1) <= 5000)
  })

  it('joins CA bundles without duplicates', () => {
    assert.equal(
      joinBundles(`${cert('AAA')}\n${cert('BBB')}\n`, `${cert('BBB')}\r\n`, cert('CCC')),
      `${cert('AAA')}\n${cert('BBB')}\n${cert('CCC')}\n`,
    )
  })

  it('sends job heartbeats at a third of the lease left, between 1 and 30 seconds', () => {
    const now = new Date('2026-01-01T00:00:00Z')
    assert.equal(jobHeartbeatIntervalMs(now, '2026-01-01T00:00:30Z'), 10_000)
    assert.equal(jobHeartbeatIntervalMs(now, '2026-01-01T00:10:00Z'), 30_000)
    assert.equal(jobHeartbeatIntervalMs(now, '2026-01-01T00:00:01Z'), 1000)
    assert.equal(jobHeartbeatIntervalMs(now, 'garbage'), 10_000)
  })
})
