// The batched look-up behind agent authentication: keys asked in one event-loop turn go out as one
// load, the same key asked twice is loaded once, big turns are chunked, and a failed load fails
// only the asks of its own chunk.
import assert from 'node:assert/strict'

import { BatchLoader } from '../../../src/gateway/load/batch-loader.js'

/** A loader over `values` that records every batch it was asked for. */
function recording(values: Record<string, number>, maxBatch?: number) {
  const loads: string[][] = []
  const loader = new BatchLoader<number>(async (keys) => {
    loads.push(keys)
    return new Map(keys.filter((k) => k in values).map((k) => [k, values[k]!]))
  }, maxBatch)
  return { loader, loads }
}

describe('gateway: batched look-ups', () => {
  it('loads the keys of one turn together, each once, and answers every ask (a missing key is undefined)', async () => {
    const { loader, loads } = recording({ a: 1, b: 2 })
    const answers = await Promise.all(['a', 'b', 'a', 'x'].map((k) => loader.get(k)))
    assert.deepEqual(answers, [1, 2, 1, undefined])
    assert.deepEqual(loads, [['a', 'b', 'x']])
  })

  it('loads asks of later turns in later batches', async () => {
    const { loader, loads } = recording({ a: 1, b: 2 })
    assert.equal(await loader.get('a'), 1)
    assert.equal(await loader.get('b'), 2)
    assert.deepEqual(loads, [['a'], ['b']])
  })

  it('chunks a turn of many keys by maxBatch', async () => {
    const values = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`k${i}`, i]))
    const { loader, loads } = recording(values, 3)
    const answers = await Promise.all(Object.keys(values).map((k) => loader.get(k)))
    assert.deepEqual(answers, [0, 1, 2, 3, 4, 5, 6])
    assert.deepEqual(
      loads.map((l) => l.length),
      [3, 3, 1],
    )
  })

  it('a load that fails (rejecting or throwing) fails its own chunk only', async () => {
    let call = 0
    const loader = new BatchLoader<number>((keys) => {
      call++
      if (call === 1) return Promise.reject(new Error('database went away'))
      if (call === 2) throw new Error('thrown at once')
      return Promise.resolve(new Map(keys.map((k) => [k, 1])))
    }, 1)
    const results = await Promise.allSettled(['a', 'b', 'c'].map((k) => loader.get(k)))
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
      ['database went away', 'thrown at once', 1],
    )
  })
})
