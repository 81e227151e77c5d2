// The gateway's descriptor budget at start (issue 20, item 2): the soft limit is raised to the hard
// one, and a limit below enroll + agent caps + reserve is refused with GATEWAY_DESCRIPTOR_LIMIT
// naming the numbers. The limit and the raise are injected.
import assert from 'node:assert/strict'

import type { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import {
  ensureDescriptorBudget,
  parseOpenFilesLimit,
  type OpenFilesLimit,
} from '../../../src/gateway/tls/descriptor-limit.js'
import { loadGatewayConfig } from '../../../src/gateway/config.js'

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            1024                 524288               files
Max locked memory         8388608              8388608              bytes
`

const BUDGET = { enrollConnections: 512, agentConnections: 16_384, reserve: 256 }

function withLimit(initial: OpenFilesLimit, raiseWorks = true) {
  let current = { ...initial }
  const raised: number[] = []
  const logs: string[] = []
  const deps = {
    read: () => current,
    raise: (to: number) => {
      raised.push(to)
      if (!raiseWorks) throw new Error('prlimit: No such file or directory')
      current = { soft: to, hard: current.hard }
    },
    logger: (_level: string, msg: string) => logs.push(msg),
  }
  return { deps, raised, logs }
}

describe('gateway: descriptor budget at start', () => {
  it('reads the soft and hard open-files limits from /proc/self/limits', () => {
    assert.deepEqual(parseOpenFilesLimit(LIMITS), { soft: 1024, hard: 524_288 })
    assert.deepEqual(parseOpenFilesLimit('Max open files  unlimited  unlimited  files\n'), {
      soft: Infinity,
      hard: Infinity,
    })
    assert.equal(parseOpenFilesLimit('nothing here'), undefined)
  })

  it('raises the soft limit to the hard one, then the default caps fit', () => {
    const t = withLimit({ soft: 1024, hard: 524_288 })
    const limit = ensureDescriptorBudget(BUDGET, t.deps)
    assert.deepEqual(t.raised, [524_288])
    assert.deepEqual(limit, { soft: 524_288, hard: 524_288 })
    assert.deepEqual(t.logs, ['descriptor_limit_raised', 'descriptor_budget'])
  })

  it('refuses to start below what the caps need, naming the numbers', () => {
    const t = withLimit({ soft: 1024, hard: 1024 })
    assert.throws(
      () => ensureDescriptorBudget(BUDGET, t.deps),
      (e: FleetkitError) =>
        e.code === 'GATEWAY_DESCRIPTOR_LIMIT' &&
        e.message ===
          'the gateway needs 17152 open files (512 enrollment + 16384 agent connections + 256 kept for the database pool and PKI files) but its limit is 1024 (hard 1024)' &&
        e.data?.needed === 17_152 &&
        e.data?.soft_limit === 1024,
    )
    assert.deepEqual(t.raised, [], 'nothing to raise: soft is already the hard limit')
  })

  it('a raise that fails (no prlimit) is logged, and the budget is checked against the limit as it is', () => {
    const t = withLimit({ soft: 1024, hard: 65_536 }, false)
    assert.throws(
      () => ensureDescriptorBudget(BUDGET, t.deps),
      (e: FleetkitError) => e.code === 'GATEWAY_DESCRIPTOR_LIMIT',
    )
    assert.deepEqual(t.logs, ['descriptor_limit_not_raised'])
    const small = withLimit({ soft: 1024, hard: 65_536 }, false)
    ensureDescriptorBudget({ enrollConnections: 64, agentConnections: 600, reserve: 256 }, small.deps)
    assert.deepEqual(small.logs, ['descriptor_limit_not_raised', 'descriptor_budget'])
  })

  it('the agent listener caps come from FLEETKIT_AGENT_MAX_CONNECTIONS[_PER_SOURCE], defaulting to 16384 and 1024', () => {
    assert.deepEqual(loadGatewayConfig({}).agentConnections, { maxConnections: 16_384, maxPerSource: 1024 })
    const set = loadGatewayConfig({
      FLEETKIT_AGENT_MAX_CONNECTIONS: '600',
      FLEETKIT_AGENT_MAX_CONNECTIONS_PER_SOURCE: '100',
    })
    assert.deepEqual(set.agentConnections, { maxConnections: 600, maxPerSource: 100 })
    assert.throws(
      () => loadGatewayConfig({ FLEETKIT_AGENT_MAX_CONNECTIONS_PER_SOURCE: '0' }),
      (e: FleetkitError) => e.code === 'GATEWAY_CONFIG_INVALID',
    )
  })
})
