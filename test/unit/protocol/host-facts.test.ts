import assert from 'node:assert/strict'

import { boundHostFacts, HOST_FACT_STRING_MAX, readHostFacts } from '../../../src/protocol/host-facts.js'
import { WireFormatError } from '../../../src/protocol/wire-format.js'
import { readHeartbeatRequest } from '../../../src/protocol/agent-routes.js'

describe('protocol: host facts', () => {
  it('keeps well-formed facts', () => {
    const facts = {
      cpu_count: 4,
      memory_mb: 8192,
      data_disk_free_gb: 120.5,
      kernel: '6.1.0-18-amd64',
      docker_version: '24.0.7',
      agent_version: '0.1.0',
      bridge_netfilter: true,
      clock_skew_ms: -12,
    }
    assert.deepEqual(boundHostFacts(facts), facts)
  })

  it('drops wrong types and out-of-range numbers to null', () => {
    const f = boundHostFacts({
      cpu_count: '4',
      memory_mb: -1,
      data_disk_free_gb: Number.NaN,
      kernel: 7,
      bridge_netfilter: 'yes',
      clock_skew_ms: Infinity,
    })
    assert.equal(f.cpu_count, null)
    assert.equal(f.memory_mb, null)
    assert.equal(f.data_disk_free_gb, null)
    assert.equal(f.kernel, null)
    assert.equal(f.bridge_netfilter, null)
    assert.equal(f.clock_skew_ms, null)
    assert.equal(boundHostFacts({ memory_mb: 2 ** 40 }).memory_mb, null)
  })

  it('clamps clock skew into the column range and rounds integers', () => {
    assert.equal(boundHostFacts({ clock_skew_ms: 1e15 }).clock_skew_ms, 2_147_483_647)
    assert.equal(boundHostFacts({ clock_skew_ms: -1e15 }).clock_skew_ms, -2_147_483_647)
    assert.equal(boundHostFacts({ cpu_count: 3.6 }).cpu_count, 4)
  })

  it('cuts long strings and removes control characters', () => {
    const f = boundHostFacts({ kernel: 'k'.repeat(10_000), docker_version: 'v1\n\u0000evil', agent_version: '   ' })
    assert.equal(f.kernel?.length, HOST_FACT_STRING_MAX)
    assert.equal(f.docker_version, 'v1  evil')
    assert.equal(f.agent_version, null)
    // C1 controls (CSI among them) and bidirectional overrides, which would turn a version around on a terminal.
    const g = boundHostFacts({ kernel: '6.8\u009b2J', agent_version: '\u202e0.1.0\u202c', docker_version: 'a\u200bb' })
    assert.deepEqual([g.kernel, g.agent_version, g.docker_version], ['6.8 2J', '0.1.0', 'a b'])
  })

  it('cuts by code points, never inside a surrogate pair, and keeps strings at the limit whole', () => {
    const emoji = '\u{1F600}'
    const cut = boundHostFacts({ kernel: emoji.repeat(HOST_FACT_STRING_MAX + 5) }).kernel!
    assert.equal(Array.from(cut).length, HOST_FACT_STRING_MAX)
    assert.equal(cut, emoji.repeat(HOST_FACT_STRING_MAX))
    const atLimit = 'a'.repeat(HOST_FACT_STRING_MAX - 1) + emoji
    assert.equal(boundHostFacts({ kernel: atLimit }).kernel, atLimit)
    assert.equal(boundHostFacts({ kernel: ' \t6.8.0\u007f ' }).kernel, '6.8.0')
  })

  it('reads absent or null facts as null, refuses facts that are not an object, and never inherits a field', () => {
    assert.equal(readHostFacts(undefined, 'facts'), null)
    assert.equal(readHostFacts(null, 'facts'), null)
    for (const bad of ['x', 3, true, [1, 2]]) assert.throws(() => readHostFacts(bad, 'facts'), WireFormatError)
    const hostile = JSON.parse('{"__proto__": {"cpu_count": 9}, "constructor": {"kernel": "x"}}') as unknown
    assert.deepEqual(readHostFacts(hostile, 'facts'), boundHostFacts({}))
    assert.equal(({} as { cpu_count?: number }).cpu_count, undefined, 'no prototype was polluted')
  })

  it('reads facts by name from own fields only, whatever the object (ownFields)', () => {
    // Inherited from a prototype of the caller's: not a fact.
    assert.equal(boundHostFacts(Object.create({ cpu_count: 4, kernel: '6.1' }) as object).cpu_count, null)
    assert.equal(boundHostFacts(Object.create({ cpu_count: 4, kernel: '6.1' }) as object).kernel, null)
    // A null-prototype object and a class instance: their own fields are.
    const bare = Object.assign(Object.create(null) as object, { cpu_count: 2 })
    assert.equal(boundHostFacts(bare).cpu_count, 2)
    class Facts {
      memory_mb = 512
    }
    assert.equal(boundHostFacts(new Facts()).memory_mb, 512)
    // The same for the heartbeat body around them.
    const inherited = Object.create({ facts: { cpu_count: 4 } }) as object
    assert.equal(readHeartbeatRequest(inherited).facts, null)
    assert.equal(readHeartbeatRequest(JSON.parse('{"facts": {"cpu_count": 4}}')).facts?.cpu_count, 4)
  })
})
