import assert from 'node:assert/strict'

import { HeartbeatCoalescer } from '../../../src/gateway/load/heartbeat-coalescer.js'
import { type Heartbeat, mergeHeartbeat } from '../../../src/store/nodes/heartbeats.js'

function manualTimer() {
  let tick: (() => void) | undefined
  return {
    setInterval: (fn: () => void) => {
      tick = fn
      return {}
    },
    clearInterval: () => {
      tick = undefined
    },
    fire: () => tick?.(),
    get running() {
      return tick !== undefined
    },
  }
}

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s))

describe('gateway: heartbeat coalescer', () => {
  it('writes one batch per interval with the newest beat of each node', async () => {
    const writes: Heartbeat[][] = []
    const timer = manualTimer()
    const c = new HeartbeatCoalescer({
      write: async (b) => {
        writes.push(b)
      },
      ...timer,
    })
    c.start()
    c.add({ nodeId: 'a', seenAt: at(1), facts: { cpu_count: 1 } })
    c.add({ nodeId: 'a', seenAt: at(3), facts: { cpu_count: 3 } })
    c.add({ nodeId: 'a', seenAt: at(2), facts: { cpu_count: 2 } })
    c.add({ nodeId: 'b', seenAt: at(1) })
    assert.equal(writes.length, 0, 'nothing is written until the interval')
    timer.fire()
    await c.flush()
    assert.equal(writes.length, 1)
    assert.deepEqual(
      writes[0]!.map((b) => [
        b.nodeId,
        b.seenAt.getUTCSeconds(),
        (b.facts as { cpu_count?: number } | undefined)?.cpu_count,
      ]),
      [
        ['a', 3, 3],
        ['b', 1, undefined],
      ],
    )
    timer.fire()
    await c.flush()
    assert.equal(writes.length, 1, 'an empty interval writes nothing')
  })

  it('keeps earlier facts when a later beat carries none', async () => {
    const writes: Heartbeat[][] = []
    const c = new HeartbeatCoalescer({
      write: async (b) => {
        writes.push(b)
      },
      ...manualTimer(),
    })
    c.add({ nodeId: 'a', seenAt: at(1), facts: { kernel: 'k1' } })
    c.add({ nodeId: 'a', seenAt: at(2), facts: null })
    await c.flush()
    assert.equal(writes[0]![0]!.seenAt.getUTCSeconds(), 2)
    assert.deepEqual(writes[0]![0]!.facts, { kernel: 'k1' })
  })

  it('merges by the one heartbeat rule of the store: a late, older beat loses but lends its facts to a newer beat without any', async () => {
    const writes: Heartbeat[][] = []
    const c = new HeartbeatCoalescer({
      write: async (b) => {
        writes.push(b)
      },
      ...manualTimer(),
    })
    c.add({ nodeId: 'a', seenAt: at(2), facts: null })
    c.add({ nodeId: 'a', seenAt: at(1), facts: { kernel: 'k1' } })
    await c.flush()
    assert.equal(writes[0]![0]!.seenAt.getUTCSeconds(), 2)
    assert.deepEqual(writes[0]![0]!.facts, { kernel: 'k1' })
    const older = { nodeId: 'b', seenAt: at(1), facts: { kernel: 'old' } }
    const newer = { nodeId: 'b', seenAt: at(3), facts: { kernel: 'new' } }
    assert.deepEqual(mergeHeartbeat(mergeHeartbeat(undefined, newer), older), newer, 'order of arrival does not matter')
    assert.deepEqual(mergeHeartbeat(older, newer), newer)
  })

  it('never runs two writes at once and retries a failed batch, newer beats winning', async () => {
    let release: () => void = () => undefined
    let calls = 0
    const written: Heartbeat[][] = []
    const c = new HeartbeatCoalescer({
      write: async (b) => {
        calls += 1
        if (calls === 1) {
          await new Promise<void>((r) => {
            release = r
          })
          throw new Error('db down')
        }
        written.push(b)
      },
      onError: () => undefined,
      ...manualTimer(),
    })
    c.add({ nodeId: 'a', seenAt: at(1) })
    c.add({ nodeId: 'b', seenAt: at(1) })
    const first = c.flush()
    const second = c.flush()
    c.add({ nodeId: 'a', seenAt: at(5) })
    assert.equal(calls, 1)
    release()
    await Promise.all([first, second])
    await c.flush()
    assert.equal(calls, 2)
    assert.deepEqual(written[0]!.map((b) => [b.nodeId, b.seenAt.getUTCSeconds()]).sort(), [
      ['a', 5],
      ['b', 1],
    ])
  })

  it('close() stops the timer and writes what is pending', async () => {
    const writes: Heartbeat[][] = []
    const timer = manualTimer()
    const c = new HeartbeatCoalescer({
      write: async (b) => {
        writes.push(b)
      },
      ...timer,
    })
    c.start()
    c.add({ nodeId: 'a', seenAt: at(1) })
    await c.close()
    assert.equal(timer.running, false)
    assert.equal(writes.length, 1)
    assert.throws(() => c.add({ nodeId: 'a', seenAt: at(2) }))
  })
})
