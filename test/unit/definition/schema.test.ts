import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'

import { GENERATED_VALIDATOR_PATH, generateFleetValidatorSource } from '../../../scripts/generate-fleet-validator.js'
import { checkSchema, summarize } from '../../../src/definition/schema-validator.js'
import { validDefinition } from '../../support/definition-fixture.js'

const pairs = (data: unknown) => checkSchema(data).map((e) => [e.code, e.path])

describe('schema/fleet.schema.json (definition:schema)', () => {
  it('the precompiled validator is generated from the current schema (else: npx tsx scripts/generate-fleet-validator.ts)', () => {
    assert.equal(readFileSync(GENERATED_VALIDATOR_PATH, 'utf8'), generateFleetValidatorSource())
    assert.notEqual(generateFleetValidatorSource('{"type":"object"}'), generateFleetValidatorSource())
  })

  it('accepts the valid fixture, with or without nodes', () => {
    assert.deepEqual(checkSchema(validDefinition()), [])
    const d = validDefinition() as unknown as Record<string, unknown>
    delete d.nodes
    assert.deepEqual(checkSchema(d), [])
  })

  it('reports every error at once, each with the schema check ID', () => {
    const d = validDefinition() as unknown as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
    d.version = 2
    d.gateway.enrollUrl = 'ftp://enroll'
    d.release.publicKey = 'AAAA'
    d.nodes[0].id = '1node'
    d.nodes[0].dataVolume = { device: '/dev/sdb', filesystem: 'ext4', mountPoint: '/srv' }
    d.pools['Bad_Pool'] = d.pools.build
    const errors = checkSchema(d)
    assert.deepEqual(errors.map((e) => [e.code, e.path]).sort(), [
      ['DEFINITION_VALUE_INVALID', '/gateway/enrollUrl'],
      ['DEFINITION_VALUE_INVALID', '/nodes/0/dataVolume/filesystem'],
      ['DEFINITION_VALUE_INVALID', '/nodes/0/id'],
      ['DEFINITION_VALUE_INVALID', '/pools/Bad_Pool'],
      ['DEFINITION_VALUE_INVALID', '/release/publicKey'],
      ['DEFINITION_VALUE_INVALID', '/version'],
    ])
    assert.ok(errors.every((e) => e.check === 'definition:schema'))
    const version = errors.find((e) => e.path === '/version')!
    assert.deepEqual([version.expected, version.actual], [1, 2])
  })

  it('names an unknown field and the allowed ones; a missing field by its own pointer', () => {
    const d = validDefinition() as unknown as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
    d.nodes[0].ssh.hostname = d.nodes[0].ssh.host
    delete d.nodes[0].ssh.host
    const errors = checkSchema(d)
    // ssh.host is optional in the schema (a provisioned node's address is its server's): whether this
    // node needs one is the semantic rule NODE_SSH_HOST_MISSING's to say (ssh-host-declared.ts).
    assert.deepEqual(
      errors.map((e) => [e.code, e.path]),
      [['DEFINITION_FIELD_UNKNOWN', '/nodes/0/ssh/hostname']],
    )
    assert.match(errors[0]!.message, /unknown field "hostname" \(allowed: host, user, port\)/)
    d.nodes[0].ssh = { host: 'h', usr: 'fleetkit' }
    const typo = checkSchema(d)
    // ssh.user is required, so the misspelt field is also a missing one: both are named.
    assert.deepEqual(
      typo.map((e) => [e.code, e.path]),
      [
        ['DEFINITION_FIELD_MISSING', '/nodes/0/ssh/user'],
        ['DEFINITION_FIELD_UNKNOWN', '/nodes/0/ssh/usr'],
      ],
    )
    assert.match(typo[1]!.message, /unknown field "usr"; did you mean "user"\? \(allowed: host, user, port\)/)
  })

  it('accepts a release public key of exactly 32 bytes only', () => {
    const d = validDefinition()
    d.release.publicKey = Buffer.alloc(32, 7).toString('base64')
    assert.deepEqual(pairs(d), [])
    d.release.publicKey = Buffer.alloc(33, 7).toString('base64')
    assert.deepEqual(pairs(d), [['DEFINITION_VALUE_INVALID', '/release/publicKey']])
    d.release.publicKey = Buffer.alloc(31, 7).toString('base64')
    assert.deepEqual(pairs(d), [['DEFINITION_VALUE_INVALID', '/release/publicKey']])
  })

  // 1e308 was valid and shown as Infinity, 2^53 + 1 silently rounded; the state's columns hold neither.
  it('bounds capacities to what the state stores: numeric(8, 2) vCPUs, integer MiB and GiB', () => {
    const d = validDefinition()
    d.pools.build!.capacityBudget = { cpu: 1e308, memoryMiB: 2 ** 53, diskGiB: 1e300 }
    assert.deepEqual(pairs(d), [
      ['DEFINITION_VALUE_INVALID', '/pools/build/capacityBudget/cpu'],
      ['DEFINITION_VALUE_INVALID', '/pools/build/capacityBudget/memoryMiB'],
      ['DEFINITION_VALUE_INVALID', '/pools/build/capacityBudget/diskGiB'],
    ])
    assert.equal(checkSchema(d)[0]!.expected, '<= 999999')
    d.pools.build!.capacityBudget = { cpu: 999999, memoryMiB: 2147483647, diskGiB: 2147483647 }
    assert.deepEqual(pairs(d), [])
    d.pools.build!.capacityBudget = { cpu: 1000000, memoryMiB: 2147483648, diskGiB: 2147483648 }
    assert.equal(pairs(d).length, 3)
  })

  it('summarises actual values without nesting: long strings cut, objects by kind', () => {
    assert.equal(summarize({ a: 'secret' }), 'an object')
    assert.equal(summarize([1, 2]), 'an array of 2 items')
    assert.equal((summarize('x'.repeat(500)) as string).length, 120)
  })
})
