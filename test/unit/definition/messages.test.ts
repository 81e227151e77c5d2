import assert from 'node:assert/strict'

import { validateDefinitionText } from '../../../src/definition/validate-text.js'
import { validDefinition } from '../../support/definition-fixture.js'

type Mutable = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

function messages(change: (d: Mutable) => void): Record<string, string> {
  const d = validDefinition() as unknown as Mutable
  change(d)
  const { errors } = validateDefinitionText(JSON.stringify(d), 'fleet.json')
  return Object.fromEntries(errors.map((e) => [`${e.code} ${e.path}`, e.message]))
}

describe('messages say what is expected in words', () => {
  it('an enum lists its allowed values', () => {
    const m = messages((d) => {
      d.nodes[0].state = 'running'
    })
    assert.equal(m['DEFINITION_VALUE_INVALID /nodes/0/state'], 'must be one of "active", "drained", "disabled"')
  })

  it('a URL is "an https:// URL", never a regex', () => {
    const m = messages((d) => {
      d.gateway.url = 'http://gateway.fleet.internal'
    })
    assert.match(m['DEFINITION_VALUE_INVALID /gateway/url']!, /^must be an https:\/\/ URL: a host name/)
    assert.doesNotMatch(m['DEFINITION_VALUE_INVALID /gateway/url']!, /\^|\[/)
  })

  it('a pattern is named in words: versions, users, node ids', () => {
    const m = messages((d) => {
      d.release.version = '1.2.3+build.7'
      d.nodes[0].ssh.user = 'Ops User'
      d.canary = 'Build_1'
    })
    assert.match(m['DEFINITION_VALUE_INVALID /release/version']!, /MAJOR\.MINOR\.PATCH.*no "\+build"/)
    assert.match(m['DEFINITION_VALUE_INVALID /nodes/0/ssh/user']!, /^must be a POSIX user name/)
    assert.match(m['DEFINITION_VALUE_INVALID /canary']!, /^must be a node id: a lowercase letter/)
  })

  it("the grammar's extra checks say the same words (a URL the regex admits but no parser does)", () => {
    const m = messages((d) => {
      d.release.url = 'https://10.0.0.999/agent'
    })
    assert.match(m['DEFINITION_VALUE_INVALID /release/url']!, /^must be an https:\/\/ URL/)
  })

  it('a wrong type says the type in words', () => {
    const m = messages((d) => {
      d.pools.build.ingress = 'yes'
    })
    assert.equal(m['DEFINITION_VALUE_INVALID /pools/build/ingress'], 'must be true or false')
  })

  it('did you mean: pool, canary (a node) and server-type names', () => {
    const m = messages((d) => {
      d.nodes[1].pool = 'databse'
      d.canary = 'build-2'
      d.pools.build.serverType = 'cx33'
    })
    assert.match(
      m['POOL_REFERENCE_UNKNOWN /nodes/1/pool']!,
      /pool "databse", which is not declared; did you mean "database"\?/,
    )
    assert.match(m['CANARY_UNKNOWN /canary']!, /canary "build-2" is not a declared node; did you mean "build-1"\?/)
    assert.match(m['SERVER_TYPE_UNKNOWN /pools/build/serverType']!, /"cx33" .*; did you mean "cx32"\?/)
  })

  it('no suggestion when nothing is close', () => {
    const m = messages((d) => {
      d.nodes[1].pool = 'frontend'
    })
    assert.doesNotMatch(m['POOL_REFERENCE_UNKNOWN /nodes/1/pool']!, /did you mean/)
  })

  it('capacity over budget says by how much: "cpu 9 > 8"', () => {
    const m = messages((d) => {
      d.pools.build.serverType = 'cx42'
      d.nodes[0].maxCapacity = { cpu: 9, memoryMiB: 8192, diskGiB: 80 }
      d.pools.build.capacityBudget.cpu = 8
    })
    assert.match(m['POOL_CAPACITY_EXCEEDED /pools/build/capacityBudget']!, /\(cpu 9 > 8\)$/)
  })
})
