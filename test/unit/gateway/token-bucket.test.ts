import assert from 'node:assert/strict'

import { RateLimiter, TokenBucket } from '../../../src/gateway/load/token-bucket.js'

describe('gateway: token bucket', () => {
  it('allows the burst at once, then one token per 1/perSecond, and says how long to wait', () => {
    const bucket = new TokenBucket({ burst: 3, perSecond: 2 }, 0)
    assert.deepEqual([bucket.take(0), bucket.take(0), bucket.take(0)], [0, 0, 0])
    assert.equal(bucket.take(0), 0.5)
    assert.ok(bucket.take(499) > 0, 'not yet a whole token after 499 ms')
    assert.equal(bucket.take(500), 0)
    assert.equal(bucket.take(500), 0.5)
    assert.equal(bucket.isFull(10_000), true)
  })

  it('never holds more than the burst however long it idles', () => {
    const bucket = new TokenBucket({ burst: 2, perSecond: 100 }, 0)
    const taken = [0, 0, 0].map(() => bucket.take(1_000_000))
    assert.deepEqual(
      taken.map((t) => t === 0),
      [true, true, false],
    )
  })
})

describe('gateway: rate limiter', () => {
  it('limits each source apart, answers a whole-second Retry-After, and refills with the clock', () => {
    let now = 0
    const limiter = new RateLimiter(
      { perSource: { burst: 2, perSecond: 0.5 }, global: { burst: 100, perSecond: 100 } },
      () => now,
    )
    assert.deepEqual(limiter.take('a'), { allowed: true })
    assert.deepEqual(limiter.take('a'), { allowed: true })
    assert.deepEqual(limiter.take('a'), { allowed: false, retryAfterSeconds: 2, scope: 'source' })
    assert.deepEqual(limiter.take('b'), { allowed: true })
    now = 2000
    assert.deepEqual(limiter.take('a'), { allowed: true })
  })

  it('has a global limit across sources', () => {
    const limiter = new RateLimiter(
      { perSource: { burst: 10, perSecond: 10 }, global: { burst: 3, perSecond: 1 } },
      () => 0,
    )
    const results = ['a', 'b', 'c', 'd'].map((s) => limiter.take(s))
    assert.deepEqual(
      results.map((r) => r.allowed),
      [true, true, true, false],
    )
    assert.equal((results[3] as { scope: string }).scope, 'global')
  })

  it('keeps at most maxSources buckets, dropping idle ones first', () => {
    let now = 0
    const limiter = new RateLimiter(
      { perSource: { burst: 1, perSecond: 1 }, global: { burst: 1e6, perSecond: 1e6 }, maxSources: 100 },
      () => now,
    )
    for (let i = 0; i < 1000; i++) limiter.take(`10.0.${Math.floor(i / 256)}.${i % 256}`)
    assert.ok(limiter.trackedSources <= 100)
    now = 10_000
    limiter.take('fresh')
    assert.ok(limiter.trackedSources <= 100)
  })
})
