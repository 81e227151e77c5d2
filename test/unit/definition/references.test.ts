import assert from 'node:assert/strict'

import { canaryExists } from '../../../src/definition/rules/canary-reference.js'
import { nodeIdsUnique } from '../../../src/definition/rules/node-ids-unique.js'
import { poolReferencesExist } from '../../../src/definition/rules/pool-references.js'
import { ruleContext, validDefinition } from '../../support/definition-fixture.js'

describe('rule: node ids are unique (NODE_ID_DUPLICATE)', () => {
  it('accepts distinct ids', () => {
    assert.deepEqual(nodeIdsUnique(ruleContext(validDefinition())), [])
  })
  it('points at every later duplicate and names the first', () => {
    const d = validDefinition()
    d.nodes.push({ ...d.nodes[0]! }, { ...d.nodes[0]! })
    const errors = nodeIdsUnique(ruleContext(d))
    assert.deepEqual(
      errors.map((e) => [e.code, e.path, e.check]),
      [
        ['NODE_ID_DUPLICATE', '/nodes/2/id', 'definition:semantics'],
        ['NODE_ID_DUPLICATE', '/nodes/3/id', 'definition:semantics'],
      ],
    )
    assert.match(errors[0]!.message, /already declared at \/nodes\/0/)
  })
})

describe('rule: pool references exist (POOL_REFERENCE_UNKNOWN)', () => {
  it('accepts nodes in declared pools', () => {
    assert.deepEqual(poolReferencesExist(ruleContext(validDefinition())), [])
  })
  it('refuses a node in an undeclared pool and lists the pools', () => {
    const d = validDefinition()
    d.nodes[1]!.pool = 'databse'
    const [e, ...rest] = poolReferencesExist(ruleContext(d))
    assert.equal(rest.length, 0)
    assert.deepEqual(
      [e!.code, e!.path, e!.actual, e!.expected],
      ['POOL_REFERENCE_UNKNOWN', '/nodes/1/pool', 'databse', ['build', 'database']],
    )
  })
})

describe('rule: the canary exists (CANARY_UNKNOWN)', () => {
  it('accepts a declared canary, and no canary at all', () => {
    assert.deepEqual(canaryExists(ruleContext(validDefinition())), [])
    const d = validDefinition()
    delete d.canary
    assert.deepEqual(canaryExists(ruleContext(d)), [])
  })
  it('refuses a canary that is not a node', () => {
    const d = validDefinition()
    d.canary = 'build-9'
    assert.deepEqual(
      canaryExists(ruleContext(d)).map((e) => [e.code, e.path, e.actual]),
      [['CANARY_UNKNOWN', '/canary', 'build-9']],
    )
  })
})
