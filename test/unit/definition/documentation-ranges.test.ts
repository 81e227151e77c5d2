import assert from 'node:assert/strict'

import { documentationRangeOf, documentationRangesRefused } from '../../../src/definition/rules/documentation-ranges.js'
import { ruleContext, validDefinition } from '../../support/definition-fixture.js'

describe('rule: documentation ranges only in a definition marked example: true (DOCUMENTATION_RANGE_REFUSED)', () => {
  it('knows the RFC 5737 and RFC 3849 ranges, and what lies outside them', () => {
    assert.equal(documentationRangeOf('192.0.2.7'), '192.0.2.0/24')
    assert.equal(documentationRangeOf('198.51.100.0/24'), '198.51.100.0/24')
    assert.equal(documentationRangeOf('203.0.113.128/25'), '203.0.113.0/24')
    assert.equal(documentationRangeOf('203.0.0.0/16'), '203.0.113.0/24') // a CIDR that contains one
    assert.equal(documentationRangeOf('2001:db8::1'), '2001:db8::/32')
    assert.equal(documentationRangeOf('2001:db8:5::/48'), '2001:db8::/32')
    assert.equal(documentationRangeOf('2001::/16'), '2001:db8::/32')
    for (const outside of ['192.0.3.1', '198.51.101.0/24', '10.0.0.0/8', '2001:db9::/32', 'host.example.net']) {
      assert.equal(documentationRangeOf(outside), undefined, outside)
    }
  })

  it('accepts a fleet on real addresses', () => {
    assert.deepEqual(documentationRangesRefused(ruleContext(validDefinition())), [])
  })

  it('refuses operator cidrs, docker ranges and node addresses in documentation ranges', () => {
    const d = validDefinition()
    d.operators.cidrs.push('2001:db8::/48')
    d.pools.build!.dockerNetworkPolicy!.defaultBridgeCidr = '192.0.2.1/24'
    d.nodes[0]!.ssh!.host = '203.0.113.5'
    const errors = documentationRangesRefused(ruleContext(d))
    assert.deepEqual(
      errors.map((e) => [e.code, e.path]),
      [
        ['DOCUMENTATION_RANGE_REFUSED', '/operators/cidrs/1'],
        ['DOCUMENTATION_RANGE_REFUSED', '/pools/build/dockerNetworkPolicy/defaultBridgeCidr'],
        ['DOCUMENTATION_RANGE_REFUSED', '/nodes/0/ssh/host'],
      ],
    )
    assert.match(errors[0]!.message, /is in the documentation range 2001:db8::\/32.*example: true/)
    d.example = true
    assert.deepEqual(documentationRangesRefused(ruleContext(d)), [])
  })

  it('says when a CIDR contains a documentation range rather than sits in one', () => {
    const d = validDefinition()
    d.operators.cidrs = ['198.51.0.0/16', '198.51.100.0/25', '2001::/16']
    const messages = documentationRangesRefused(ruleContext(d)).map((e) => e.message)
    assert.match(messages[0]!, /^198\.51\.0\.0\/16 contains the documentation range 198\.51\.100\.0\/24/)
    assert.match(messages[1]!, /^198\.51\.100\.0\/25 is in the documentation range 198\.51\.100\.0\/24/)
    assert.match(messages[2]!, /^2001::\/16 contains the documentation range 2001:db8::\/32/)
  })
})
