// The rate budget's rule: refill at limit an hour from what the last response said, one request
// per take, nothing before a 429's time.
import assert from 'node:assert/strict'

import { memoryRateBudget } from '../../../src/provider/rate-budget.js'

describe('provider: the rate budget', () => {
  it('lets requests out while some are left, then waits for the refill (limit an hour)', async () => {
    const budget = memoryRateBudget()
    await budget.observe({ limit: 3600, remaining: 2, resetAtMs: 0 }, 1_000)
    assert.equal(await budget.take(1_000), 0)
    assert.equal(await budget.take(1_000), 0)
    assert.equal(await budget.take(1_000), 1000)
    assert.equal(await budget.take(1_500), 500)
    assert.equal(await budget.take(2_000), 0)
  })

  it('a smaller limit refills more slowly', async () => {
    const budget = memoryRateBudget()
    await budget.observe({ limit: 60, remaining: 0, resetAtMs: 0 }, 0)
    assert.equal(await budget.take(0), 60_000)
  })

  it('after a 429 nothing leaves before its time, whatever the refill says', async () => {
    const budget = memoryRateBudget()
    await budget.observe({ limit: 3600, remaining: 100, resetAtMs: 0 }, 0)
    await budget.block(30_000)
    assert.equal(await budget.take(10_000), 20_000)
    assert.equal(await budget.take(30_000), 0)
  })

  it('adopts a response that says fewer are left (another consumer), not one that says more (ours in flight)', async () => {
    const budget = memoryRateBudget()
    await budget.observe({ limit: 3600, remaining: 5, resetAtMs: 0 }, 0)
    assert.equal(await budget.take(0), 0)
    assert.equal(await budget.take(0), 0)
    // A response to the first take, sent before the second was counted, still says 4.
    await budget.observe({ limit: 3600, remaining: 4, resetAtMs: 0 }, 0)
    for (let i = 0; i < 3; i++) assert.equal(await budget.take(0), 0)
    assert.equal(await budget.take(0), 1000)
    await budget.observe({ limit: 3600, remaining: 0, resetAtMs: 0 }, 0)
    assert.equal(await budget.take(500), 500)
  })
})
