import assert from 'node:assert/strict'

import { dataVolumeMountsAllowed } from '../../../src/definition/rules/data-volume-mount.js'
import { documentationRangeOf, documentationRangesRefused } from '../../../src/definition/rules/documentation-ranges.js'
import { findSecrets } from '../../../src/definition/rules/secrets.js'
import { serverTypesKnown } from '../../../src/definition/rules/server-types.js'
import { sizesAtLeastMinimum } from '../../../src/definition/rules/sizing.js'
import { checkValueGrammar } from '../../../src/definition/value-grammar.js'
import { ruleContext, validDefinition } from '../../support/definition-fixture.js'

// The walks and rules build an error's JSON pointer only when they report one (a valid fleet of
// thousands of nodes builds none): these hold the pointers to what they were when built eagerly.
describe('error pointers built only for errors', () => {
  const aws = 'AKIA' + 'ABCDEFGHIJKLMNOP'

  it('findSecrets: escaped keys, array indexes and a secret key below a parent', () => {
    const data = { 'a/b': { 'c~d': ['plain', aws] }, nested: [{ [aws]: 1 }] }
    assert.deepEqual(
      findSecrets(data).map((f) => [f.path, f.inKey]),
      [
        ['/a~1b/c~0d/1', false],
        ['/nested/0/[redacted]', true],
      ],
    )
    assert.deepEqual(
      findSecrets(aws).map((f) => f.path),
      [''],
    )
  })

  it('checkValueGrammar: the pointer of each value its extra check refuses, in glob order', () => {
    const data = {
      gateway: {
        url: 'https://1.2.3.999',
        replicas: [{ url: 'https://ok.fleet.internal' }, { url: 'https://300.1.1.1' }],
      },
      nodes: [{ ssh: { host: '10.0.0.1' } }, { ssh: { host: '1:2:3' } }],
    }
    assert.deepEqual(
      checkValueGrammar(data).map((e) => [e.code, e.path, e.actual]),
      [
        ['DEFINITION_VALUE_INVALID', '/gateway/url', 'https://1.2.3.999'],
        ['DEFINITION_VALUE_INVALID', '/gateway/replicas/1/url', 'https://300.1.1.1'],
        ['DEFINITION_VALUE_INVALID', '/nodes/1/ssh/host', '1:2:3'],
      ],
    )
  })

  it('documentation ranges: a plain address is its own one-address network', () => {
    assert.equal(documentationRangeOf('203.0.113.5'), '203.0.113.0/24')
    assert.equal(documentationRangeOf('203.0.114.5'), undefined)
    assert.equal(documentationRangeOf('192.0.2.0/23'), '192.0.2.0/24')
    assert.equal(documentationRangeOf('01.2.3.4'), undefined)
    const definition = validDefinition()
    definition.nodes[1]!.ssh!.host = '198.51.100.7'
    assert.deepEqual(
      documentationRangesRefused(ruleContext(definition)).map((e) => [e.path, e.message.split(';')[0]]),
      [['/nodes/1/ssh/host', '198.51.100.7 is in the documentation range 198.51.100.0/24']],
    )
  })

  it('data volumes: nodes sharing a refused mount point each get their own error', () => {
    const definition = validDefinition()
    const [build, db] = definition.nodes
    build!.dataVolume = { device: '/dev/sdb', filesystem: 'xfs', mountPoint: '/etc' }
    db!.dataVolume = { device: '/dev/sdb', filesystem: 'xfs', mountPoint: '/etc' }
    definition.nodes.push({
      ...db!,
      id: 'db-2',
      dataVolume: { device: '/dev/sdc', filesystem: 'xfs', mountPoint: '/srv/data' },
    })
    const errors = dataVolumeMountsAllowed(ruleContext(definition))
    assert.deepEqual(
      errors.map((e) => e.path),
      ['/nodes/0/dataVolume/mountPoint', '/nodes/1/dataVolume/mountPoint'],
    )
    assert.match(errors[1]!.message, /^node "db-1" mounts its data volume at \/etc, but it is the system's \/etc;/)
  })

  it('server types: an unknown or undersized pinned type is reported at its node or pool', () => {
    const definition = validDefinition()
    definition.nodes[1]!.serverType = 'cx99'
    definition.pools.build!.serverType = 'cx98'
    assert.deepEqual(
      serverTypesKnown(ruleContext(definition)).map((e) => [e.path, e.message.split(' is not')[0]]),
      [
        ['/pools/build/serverType', 'pool "build" server type "cx98"'],
        ['/nodes/1/serverType', 'node "db-1" server type "cx99"'],
      ],
    )
    const policy = ruleContext(definition).policy
    const tiny = { ...policy, sizing: { minimum: { ...policy.sizing.minimum, cpu: 3 } } }
    definition.nodes[1]!.serverType = 'cx22'
    assert.deepEqual(
      sizesAtLeastMinimum({ definition, policy: tiny })
        .filter((e) => e.path.endsWith('/serverType'))
        .map((e) => [e.path, e.message.split(':')[0]]),
      [
        ['/pools/database/serverType', 'pool "database" server type "cx22" is below the host policy minimum'],
        ['/nodes/1/serverType', 'node "db-1" server type "cx22" is below the host policy minimum'],
      ],
    )
  })
})
