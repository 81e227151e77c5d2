import assert from 'node:assert/strict'

import { boundHostFacts, HOST_FACT_STRING_MAX } from '../../../src/store/nodes.js'

describe('boundHostFacts', () => {
  it('keeps well-formed facts', () => {
    assert.deepEqual(boundHostFacts({
      cpu_count: 4, memory_mb: 8192, data_disk_free_gb: 120.5, kernel: '6.1.0-18-amd64', docker_version: '24.0.7',
      agent_version: '0.1.0', bridge_netfilter: true, clock_skew_ms: -12,
    }), {
      cpuCount: 4, memoryMb: 8192, dataDiskFreeGb: 120.5, kernel: '6.1.0-18-amd64', dockerVersion: '24.0.7',
      agentVersion: '0.1.0', bridgeNetfilter: true, clockSkewMs: -12,
    })
  })

  it('drops wrong types and out-of-range numbers to null', () => {
    const f = boundHostFacts({ cpu_count: '4', memory_mb: -1, data_disk_free_gb: Number.NaN, kernel: 7, bridge_netfilter: 'yes', clock_skew_ms: Infinity })
    assert.equal(f.cpuCount, null)
    assert.equal(f.memoryMb, null)
    assert.equal(f.dataDiskFreeGb, null)
    assert.equal(f.kernel, null)
    assert.equal(f.bridgeNetfilter, null)
    assert.equal(f.clockSkewMs, null)
    assert.equal(boundHostFacts({ memory_mb: 2 ** 40 }).memoryMb, null)
  })

  it('clamps clock skew into the column range and rounds integers', () => {
    assert.equal(boundHostFacts({ clock_skew_ms: 1e15 }).clockSkewMs, 2_147_483_647)
    assert.equal(boundHostFacts({ clock_skew_ms: -1e15 }).clockSkewMs, -2_147_483_647)
    assert.equal(boundHostFacts({ cpu_count: 3.6 }).cpuCount, 4)
  })

  it('cuts long strings and removes control characters', () => {
    const f = boundHostFacts({ kernel: 'k'.repeat(10_000), docker_version: 'v1\n\u0000evil', agent_version: '   ' })
    assert.equal(f.kernel?.length, HOST_FACT_STRING_MAX)
    assert.equal(f.dockerVersion, 'v1  evil')
    assert.equal(f.agentVersion, null)
  })

  it('accepts missing facts', () => {
    assert.equal(boundHostFacts(undefined).cpuCount, null)
    assert.equal(boundHostFacts(null).kernel, null)
  })
})
