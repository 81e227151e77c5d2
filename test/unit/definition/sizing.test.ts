import assert from 'node:assert/strict'

import { regionsKnown } from '../../../src/definition/rules/regions.js'
import { serverTypesKnown } from '../../../src/definition/rules/server-types.js'
import { sizesAtLeastMinimum } from '../../../src/definition/rules/sizing.js'
import { ruleContext, validDefinition } from '../../support/definition-fixture.js'

describe('rule: sizes at least the host policy minimum (NODE_SIZE_BELOW_MINIMUM)', () => {
  it('accepts a node exactly at the minimum (2 cpu, 3584 MiB, 20 GiB)', () => {
    const d = validDefinition()
    d.nodes[1]!.maxCapacity = { cpu: 2, memoryMiB: 3584, diskGiB: 20 }
    assert.deepEqual(sizesAtLeastMinimum(ruleContext(d)), [])
  })

  it('refuses a node below the minimum in each dimension, naming each', () => {
    for (const [cap, what] of [
      [{ cpu: 1.5, memoryMiB: 4096, diskGiB: 40 }, /cpu 1\.5 < 2/],
      [{ cpu: 2, memoryMiB: 3583, diskGiB: 40 }, /memoryMiB 3583 < 3584/],
      [{ cpu: 2, memoryMiB: 4096, diskGiB: 19 }, /disk 19456 MiB < 20480 MiB/],
    ] as const) {
      const d = validDefinition()
      d.nodes[1]!.maxCapacity = { ...cap }
      const errors = sizesAtLeastMinimum(ruleContext(d))
      assert.deepEqual(
        errors.map((e) => [e.code, e.path]),
        [['NODE_SIZE_BELOW_MINIMUM', '/nodes/1/maxCapacity']],
      )
      assert.match(errors[0]!.message, what)
    }
  })

  it('refuses a pool or node server type below the minimum (cx11, cpx11) and accepts cx22', () => {
    const d = validDefinition()
    d.pools.database!.serverType = 'cpx11'
    d.nodes[0]!.serverType = 'cx11'
    assert.deepEqual(
      sizesAtLeastMinimum(ruleContext(d)).map((e) => [e.code, e.path]),
      [
        ['NODE_SIZE_BELOW_MINIMUM', '/pools/database/serverType'],
        ['NODE_SIZE_BELOW_MINIMUM', '/nodes/0/serverType'],
      ],
    )
    d.pools.database!.serverType = 'cx22'
    d.nodes[0]!.serverType = 'cax11'
    assert.deepEqual(sizesAtLeastMinimum(ruleContext(d)), [])
  })
})

describe('rule: server types are in the catalog (SERVER_TYPE_UNKNOWN)', () => {
  it('accepts known types and refuses unknown ones on pools and nodes', () => {
    const d = validDefinition()
    assert.deepEqual(serverTypesKnown(ruleContext(d)), [])
    d.pools.build!.serverType = 'cx99'
    d.nodes[1]!.serverType = 'm5.large'
    const errors = serverTypesKnown(ruleContext(d))
    assert.deepEqual(
      errors.map((e) => [e.code, e.path, e.actual]),
      [
        ['SERVER_TYPE_UNKNOWN', '/pools/build/serverType', 'cx99'],
        ['SERVER_TYPE_UNKNOWN', '/nodes/1/serverType', 'm5.large'],
      ],
    )
    assert.ok((errors[0]!.expected as string[]).includes('cx22'))
  })
})

describe('rule: regions are in the catalog (REGION_UNKNOWN)', () => {
  it('accepts known regions and refuses unknown ones on pools and nodes', () => {
    const d = validDefinition()
    d.pools.build!.regions = ['fsn1', 'nbg1']
    d.nodes[0]!.region = 'hel1'
    assert.deepEqual(regionsKnown(ruleContext(d)), [])
    d.pools.build!.regions = ['fsn1', 'fsn2']
    d.nodes[0]!.region = 'us-east-1'
    assert.deepEqual(
      regionsKnown(ruleContext(d)).map((e) => [e.code, e.path, e.actual]),
      [
        ['REGION_UNKNOWN', '/pools/build/regions/1', 'fsn2'],
        ['REGION_UNKNOWN', '/nodes/0/region', 'us-east-1'],
      ],
    )
  })
  it('checks nothing when the policy has no region catalog', () => {
    const d = validDefinition()
    d.nodes[0]!.region = 'anywhere'
    const context = ruleContext(d)
    assert.deepEqual(regionsKnown({ ...context, policy: { ...context.policy, regions: undefined } }), [])
  })
})
