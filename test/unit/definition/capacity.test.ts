import assert from 'node:assert/strict'

import { nodeCapacity } from '../../../src/definition/capacity.js'
import { capacityWithinBudget } from '../../../src/definition/rules/capacity-budget.js'
import type { NodeDeclaration } from '../../../src/definition/types.js'
import { ruleContext, validDefinition } from '../../support/definition-fixture.js'

const buildNode = (id: string, state: NodeDeclaration['state'], cpu: number): NodeDeclaration => ({
  id,
  pool: 'build',
  state,
  maxCapacity: { cpu, memoryMiB: 4096, diskGiB: 40 },
})

describe('rule: capacity within the pool budget (POOL_CAPACITY_EXCEEDED, NODE_CAPACITY_UNDECLARED)', () => {
  it('accepts reservations exactly at the budget', () => {
    const d = validDefinition() // build budget cpu 8; build-1 reserves 3.5 (a cx32 less the host reserve)
    d.nodes.push(buildNode('build-2', 'active', 3.5), buildNode('build-3', 'active', 1))
    assert.deepEqual(capacityWithinBudget(ruleContext(d)), [])
  })

  it('counts active and drained nodes, names the pool, the sum and the budget', () => {
    const d = validDefinition()
    d.nodes.push(buildNode('build-2', 'drained', 3.5), buildNode('build-3', 'active', 1.5))
    const errors = capacityWithinBudget(ruleContext(d))
    assert.equal(errors.length, 1)
    const e = errors[0]!
    assert.deepEqual([e.code, e.path], ['POOL_CAPACITY_EXCEEDED', '/pools/build/capacityBudget'])
    assert.deepEqual(e.actual, { cpu: 8.5, memoryMiB: 15360, diskGiB: 140 })
    assert.deepEqual(e.expected, { cpu: 8, memoryMiB: 16384, diskGiB: 200 })
    assert.match(e.message, /pool "build": 3 active\/drained nodes reserve cpu 8\.5.*budget cpu 8.*\(cpu 8\.5 > 8\)$/)
  })

  it('disabled nodes reserve nothing', () => {
    const d = validDefinition()
    d.nodes.push(buildNode('build-2', 'disabled', 64))
    assert.deepEqual(capacityWithinBudget(ruleContext(d)), [])
  })

  it('a node without maxCapacity reserves its server type minus the host reserve', () => {
    const d = validDefinition()
    const node: NodeDeclaration = { id: 'build-2', pool: 'build', state: 'active' } // pool serverType cx32: 4 cores, 8192 MiB, 80 GiB
    assert.deepEqual(nodeCapacity(node, d, ruleContext(d).policy), { cpu: 3.5, memoryMiB: 7168, diskGiB: 60 })
    d.nodes.push(node)
    assert.deepEqual(capacityWithinBudget(ruleContext(d)), [])
    d.nodes.push({ ...node, id: 'build-3' })
    assert.deepEqual(
      capacityWithinBudget(ruleContext(d)).map((e) => e.code),
      ['POOL_CAPACITY_EXCEEDED'],
    )
  })

  it('an active node with no size at all is NODE_CAPACITY_UNDECLARED; a disabled one is fine', () => {
    const d = validDefinition()
    delete d.pools.database!.serverType
    delete d.nodes[1]!.maxCapacity
    assert.deepEqual(
      capacityWithinBudget(ruleContext(d)).map((e) => [e.code, e.path]),
      [['NODE_CAPACITY_UNDECLARED', '/nodes/1']],
    )
    d.nodes[1]!.state = 'disabled'
    assert.deepEqual(capacityWithinBudget(ruleContext(d)), [])
  })
})
