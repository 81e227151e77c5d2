import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'

import { validateDefinitionText } from '../../../src/definition/load.js'
import { FIXTURES, fixtureText } from '../../support/definition-fixture.js'

// Every fixture and exactly the [code, pointer] pairs it must produce (order does not matter).
const EXPECTED: Record<string, Array<[string, string]>> = {
  'valid.yaml': [],
  'unknown-field.yaml': [
    ['DEFINITION_FIELD_UNKNOWN', '/pools/database/capacityBuget'],
    ['DEFINITION_FIELD_MISSING', '/pools/database/capacityBudget'],
  ],
  'missing-field.yaml': [['DEFINITION_FIELD_MISSING', '/gateway']],
  'invalid-values.yaml': [
    ['DEFINITION_VALUE_INVALID', '/fleet'],
    ['DEFINITION_VALUE_INVALID', '/gateway/url'],
    ['DEFINITION_VALUE_INVALID', '/nodes/1/state'],
  ],
  'duplicate-node-id.yaml': [['NODE_ID_DUPLICATE', '/nodes/1/id']],
  'unknown-pool.yaml': [['POOL_REFERENCE_UNKNOWN', '/nodes/1/pool']],
  'unknown-canary.yaml': [['CANARY_UNKNOWN', '/canary']],
  'capacity-exceeded.yaml': [['POOL_CAPACITY_EXCEEDED', '/pools/build/capacityBudget']],
  'capacity-undeclared.yaml': [['NODE_CAPACITY_UNDECLARED', '/nodes/1']],
  'docker-network-invalid.yaml': [
    ['DOCKER_NETWORK_POLICY_INVALID', '/pools/build/dockerNetworkPolicy/base'],
    ['DOCKER_NETWORK_POLICY_INVALID', '/pools/build/dockerNetworkPolicy/defaultBridgeCidr'],
    ['DOCKER_NETWORK_POLICY_INVALID', '/pools/database/dockerNetworkPolicy/prefix'],
  ],
  'docker-network-overlap.yaml': [
    ['DOCKER_NETWORK_POLICY_OVERLAP', '/pools/database/dockerNetworkPolicy/base'],
    ['DOCKER_NETWORK_POLICY_OVERLAP', '/pools/database/dockerNetworkPolicy/defaultBridgeCidr'],
  ],
  'docker-network-too-small.yaml': [
    ['DOCKER_NETWORK_POLICY_TOO_SMALL', '/pools/build/dockerNetworkPolicy'],
    ['DOCKER_NETWORK_POLICY_TOO_SMALL', '/pools/build/dockerNetworkPolicy/defaultBridgeCidr'],
  ],
  'documentation-ranges.yaml': [
    ['DOCUMENTATION_RANGE_REFUSED', '/operators/cidrs/0'],
    ['DOCUMENTATION_RANGE_REFUSED', '/pools/build/dockerNetworkPolicy/base'],
    ['DOCUMENTATION_RANGE_REFUSED', '/nodes/0/ssh/host'],
  ],
  'size-below-minimum.yaml': [
    ['NODE_SIZE_BELOW_MINIMUM', '/pools/database/serverType'],
    ['NODE_SIZE_BELOW_MINIMUM', '/nodes/1/maxCapacity'],
  ],
  'server-type-unknown.yaml': [['SERVER_TYPE_UNKNOWN', '/pools/build/serverType']],
  'region-unknown.yaml': [['REGION_UNKNOWN', '/pools/build/regions/1']],
  'data-volume-reserved.yaml': [
    ['DATA_VOLUME_MOUNT_RESERVED', '/nodes/0/dataVolume/mountPoint'],
    ['DATA_VOLUME_MOUNT_RESERVED', '/nodes/1/dataVolume/mountPoint'],
  ],
  'secret-token.yaml': [
    ['DEFINITION_VALUE_INVALID', '/providers/hetzner/tokenEnv'],
    ['DEFINITION_SECRET_FOUND', '/providers/hetzner/tokenEnv'],
    ['DEFINITION_SECRET_FOUND', '/release/caFile'],
  ],
  'secret-env-payload.yaml': [
    // A payload of several lines is no file path either (control characters); its value stays redacted.
    ['DEFINITION_VALUE_INVALID', '/release/caFile'],
    ['DEFINITION_SECRET_FOUND', '/release/caFile'],
  ],
  'private-key.yaml': [
    ['DEFINITION_VALUE_INVALID', '/operators/sshKeys/1'],
    ['DEFINITION_SECRET_FOUND', '/operators/sshKeys/1'],
  ],
  'private-key-malformed.yaml': [
    ['DEFINITION_UNREADABLE', ''],
    ['DEFINITION_SECRET_FOUND', ''],
  ],
  'malformed.yaml': [['DEFINITION_UNREADABLE', '']],
  'capacity-above-server-type.yaml': [['NODE_CAPACITY_ABOVE_SERVER_TYPE', '/nodes/0/maxCapacity']],
  'region-outside-pool.yaml': [['NODE_REGION_OUTSIDE_POOL', '/nodes/0/region']],
  'architecture-mismatch.yaml': [['SERVER_TYPE_ARCHITECTURE_MISMATCH', '/nodes/0/serverType']],
  'ssh-address-duplicate.yaml': [['NODE_SSH_ADDRESS_DUPLICATE', '/nodes/1/ssh/host']],
  'docker-network-conflict.yaml': [
    ['DOCKER_NETWORK_BASE_CONFLICT', '/pools/build/dockerNetworkPolicy/base'],
    ['DOCKER_NETWORK_BASE_CONFLICT', '/pools/build/dockerNetworkPolicy/base'],
    ['DOCKER_NETWORK_BASE_CONFLICT', '/pools/database/dockerNetworkPolicy/base'],
  ],
  'public-ssh-port.yaml': [['EXPOSURE_SSH_PORT_WITHOUT_PUBLIC_SSH', '/exposure/publicPorts/1']],
  'ssh-user-root.yaml': [['NODE_SSH_USER_ROOT', '/nodes/1/ssh/user']],
  // A typo no longer hides the other mistakes: schema and semantic errors in one run.
  'typo-and-unknown-pool.yaml': [
    ['DEFINITION_FIELD_UNKNOWN', '/nodes/0/hostkey'],
    ['DEFINITION_FIELD_UNKNOWN', '/pools/database/capacityBuget'],
    ['DEFINITION_FIELD_MISSING', '/pools/database/capacityBudget'],
    ['POOL_REFERENCE_UNKNOWN', '/nodes/2/pool'],
  ],
}

const sortPairs = (pairs: Array<[string, string]>) => [...pairs].sort((a, b) => (a.join(' ') < b.join(' ') ? -1 : 1))

describe('definition fixtures', () => {
  it('has an expectation for every fixture file and a file for every expectation', () => {
    const files = readdirSync(FIXTURES)
      .filter((f) => /\.(ya?ml|json)$/.test(f))
      .sort()
    assert.deepEqual(files, Object.keys(EXPECTED).sort())
  })

  for (const [file, expected] of Object.entries(EXPECTED)) {
    it(`${file}: ${expected.length === 0 ? 'no errors' : expected.map(([code]) => code).join(', ')}`, () => {
      const { definition, errors } = validateDefinitionText(fixtureText(file), file)
      assert.deepEqual(
        sortPairs(errors.map((e) => [e.code, e.path])),
        sortPairs(expected),
        JSON.stringify(errors, null, 2),
      )
      if (expected.length === 0) assert.ok(definition)
      for (const e of errors) {
        assert.ok(
          e.line !== undefined && e.line >= 1 && e.column !== undefined && e.column >= 1,
          `${e.code} ${e.path} has no position`,
        )
        assert.ok(e.message.length > 0)
        assert.match(e.check, /^definition:(schema|semantics)$/)
      }
    })
  }

  it('malformed YAML reports the line and column of the syntax error', () => {
    const [error] = validateDefinitionText(fixtureText('malformed.yaml'), 'malformed.yaml').errors
    assert.equal(error!.code, 'DEFINITION_UNREADABLE')
    assert.deepEqual([error!.line, error!.column], [6, 13])
    assert.match(error!.message, /line 6, column 13/)
  })

  it('schema and semantic errors point at the offending line', () => {
    const errors = validateDefinitionText(fixtureText('invalid-values.yaml'), 'invalid-values.yaml').errors
    const lines = fixtureText('invalid-values.yaml').split('\n')
    for (const e of errors) assert.match(lines[e.line! - 1]!, /Fixture_1|http:|running/)
    const canary = validateDefinitionText(fixtureText('unknown-canary.yaml'), 'x').errors[0]!
    assert.equal(fixtureText('unknown-canary.yaml').split('\n')[canary.line! - 1], 'canary: build-9')
  })

  for (const file of [
    'private-key.yaml',
    'private-key-malformed.yaml',
    'secret-token.yaml',
    'secret-env-payload.yaml',
  ]) {
    it(`${file}: no secret text in any error`, () => {
      const out = JSON.stringify(validateDefinitionText(fixtureText(file), file).errors)
      for (const secret of [
        'PRIVATE KEY',
        'b3BlbnNzaC1rZXktdjE',
        'FakeHetznerApiToken',
        'ghp_',
        'fixture-not-a-real-password',
      ]) {
        assert.ok(!out.includes(secret), `${secret} leaked: ${out}`)
      }
    })
  }

  it('accepts the documentation ranges fixture once it says example: true', () => {
    const text = fixtureText('documentation-ranges.yaml').replace(/^fleet: (.*)$/m, 'fleet: $1\nexample: true')
    assert.deepEqual(validateDefinitionText(text, 'x').errors, [])
  })

  it('accepts the same fleet as JSON', () => {
    const { definition } = validateDefinitionText(fixtureText('valid.yaml'), 'valid.yaml')
    const json = JSON.stringify(definition, null, 2)
    const result = validateDefinitionText(json, 'fleet.json')
    assert.deepEqual(result.errors, [])
    assert.deepEqual(result.definition, definition)
    const broken = validateDefinitionText(json.replace('"state": "active"', '"state": "on"'), 'fleet.json').errors
    assert.deepEqual(
      broken.map((e) => [e.code, e.path]),
      [['DEFINITION_VALUE_INVALID', '/nodes/0/state']],
    )
    assert.ok(broken[0]!.line! > 1)
  })
})
