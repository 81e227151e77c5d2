import assert from 'node:assert/strict'

import { validateDefinitionText } from '../../../src/definition/validate-text.js'
import { validDefinition } from '../../support/definition-fixture.js'

type Mutable = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

function pairs(change: (d: Mutable) => void): string[] {
  const d = validDefinition() as unknown as Mutable
  change(d)
  return validateDefinitionText(JSON.stringify(d), 'fleet.json')
    .errors.map((e) => `${e.code} ${e.path}`)
    .sort()
}

describe('a typo no longer hides the other mistakes (rules on every shape-valid part)', () => {
  it('a misspelt field and a wrong pool reference are reported in the same run', () => {
    assert.deepEqual(
      pairs((d) => {
        d.nodes[0].sshh = d.nodes[0].ssh
        d.nodes[1].pool = 'databse'
      }),
      ['DEFINITION_FIELD_UNKNOWN /nodes/0/sshh', 'POOL_REFERENCE_UNKNOWN /nodes/1/pool'],
    )
  })

  it("a node the schema refuses is left out, and the rules' pointers still name the file's indexes", () => {
    assert.deepEqual(
      pairs((d) => {
        d.nodes.unshift({ id: 'Bad Node', pool: 'build', state: 'active' })
        d.nodes.push({ ...d.nodes[1], ssh: { ...d.nodes[1].ssh } })
      }),
      [
        'DEFINITION_VALUE_INVALID /nodes/0/id',
        'NODE_ID_DUPLICATE /nodes/3/id',
        'NODE_SSH_ADDRESS_DUPLICATE /nodes/3/ssh/host',
      ],
    )
    const d = validDefinition() as unknown as Mutable
    d.nodes.unshift({ id: 'Bad Node', pool: 'build', state: 'active' })
    d.nodes.push({ ...d.nodes[1] })
    const duplicate = validateDefinitionText(JSON.stringify(d), 'fleet.json').errors.find(
      (e) => e.code === 'NODE_ID_DUPLICATE',
    )!
    assert.match(duplicate.message, /already declared at \/nodes\/1$/)
  })

  it('a pool or node the schema refuses still declares its name: references to it are not "unknown"', () => {
    assert.deepEqual(
      pairs((d) => {
        d.pools.database.role = 'Database!'
        d.nodes[0].state = 'on'
      }),
      ['DEFINITION_VALUE_INVALID /nodes/0/state', 'DEFINITION_VALUE_INVALID /pools/database/role'],
    )
  })

  it('a broken top-level section does not stop the rules on the rest', () => {
    assert.deepEqual(
      pairs((d) => {
        delete d.gateway
        d.operators = 'everyone'
        d.canary = 'build-9'
      }),
      ['CANARY_UNKNOWN /canary', 'DEFINITION_FIELD_MISSING /gateway', 'DEFINITION_VALUE_INVALID /operators'],
    )
  })

  it('returns no definition while any shape error remains', () => {
    const d = validDefinition() as unknown as Mutable
    d.nodes[0].sshh = 1
    assert.equal(validateDefinitionText(JSON.stringify(d), 'fleet.json').definition, undefined)
  })

  it('a file that is not a mapping gets the schema error only', () => {
    assert.deepEqual(
      validateDefinitionText('[1, 2]', 'fleet.yaml').errors.map((e) => e.code),
      ['DEFINITION_VALUE_INVALID'],
    )
  })
})
