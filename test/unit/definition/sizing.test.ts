import assert from 'node:assert/strict'

import { regionsKnown } from '../../../src/definition/rules/regions.js'
import { serverTypesKnown } from '../../../src/definition/rules/server-types.js'
import { sizesAtLeastMinimum } from '../../../src/definition/rules/sizing.js'
import { ruleContext, validDefinition } from '../../support/definition-fixture.js'

describe('rule: sizes at least the host policy minimum (NODE_SIZE_BELOW_MINIMUM)', () => {
  // sizing.minimum is a machine (2 cpu, 3584 MiB, 20 GiB root disk); maxCapacity is what the node offers
  // after the host reserve (0.5 cpu, 1024 MiB, 20 GiB), so the machine it needs is maxCapacity plus the reserve.
  it('accepts a node whose maxCapacity plus the host reserve is exactly the minimum (1.5 cpu, 2560 MiB)', () => {
    const d = validDefinition()
    // Disk: the minimum less the reserve is 0 GiB, which the schema does not allow; 1 GiB is the least.
    d.nodes[1]!.maxCapacity = { cpu: 1.5, memoryMiB: 2560, diskGiB: 1 }
    assert.deepEqual(sizesAtLeastMinimum(ruleContext(d)), [])
  })

  it('accepts a whole cx22 less the reserve, as provisioning records it (1.5 cpu, 3072 MiB, 20 GiB)', () => {
    const d = validDefinition()
    d.nodes[1]!.maxCapacity = { cpu: 1.5, memoryMiB: 3072, diskGiB: 20 }
    assert.deepEqual(sizesAtLeastMinimum(ruleContext(d)), [])
  })

  it('refuses a node whose maxCapacity plus the reserve is below the minimum, naming each dimension', () => {
    for (const [cap, what] of [
      [{ cpu: 1.4, memoryMiB: 3072, diskGiB: 20 }, /cpu 1\.9 < 2$/],
      [{ cpu: 1.5, memoryMiB: 2559, diskGiB: 20 }, /memoryMiB 3583 < 3584$/],
    ] as const) {
      const d = validDefinition()
      d.nodes[1]!.maxCapacity = { ...cap }
      const errors = sizesAtLeastMinimum(ruleContext(d))
      assert.deepEqual(
        errors.map((e) => [e.code, e.path]),
        [['NODE_SIZE_BELOW_MINIMUM', '/nodes/1/maxCapacity']],
      )
      assert.match(errors[0]!.message, /maxCapacity plus the host reserve \(cpu 0\.5, memoryMiB 1024, diskGiB 20\)/)
      assert.match(errors[0]!.message, what)
    }
  })

  it('refuses a disk below the minimum once the reserve is added (a policy keeping 10 GiB)', () => {
    // The real reserve (20 GiB) alone reaches the minimum root disk, so a smaller reserve shows the disk side.
    const d = validDefinition()
    d.nodes[1]!.maxCapacity = { cpu: 1.5, memoryMiB: 3072, diskGiB: 9 }
    const context = ruleContext(d)
    const policy = { ...context.policy, reserve: { ...context.policy.reserve, diskGiB: 10 } }
    const errors = sizesAtLeastMinimum({ ...context, policy })
    assert.deepEqual(
      errors.map((e) => [e.code, e.path]),
      [['NODE_SIZE_BELOW_MINIMUM', '/nodes/1/maxCapacity']],
    )
    assert.match(errors[0]!.message, /disk 19456 MiB < 20480 MiB$/)
    d.nodes[1]!.maxCapacity = { cpu: 1.5, memoryMiB: 3072, diskGiB: 10 }
    assert.deepEqual(sizesAtLeastMinimum({ ...context, policy }), [])
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
