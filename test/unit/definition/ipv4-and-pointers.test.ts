import assert from 'node:assert/strict'

import { cidrsOverlap, formatCidr, parseIpv4, parseIpv4Cidr } from '../../../src/definition/ipv4.js'
import { isWithin, parsePointer, pointer } from '../../../src/definition/json-pointer.js'
import { sourcePositions } from '../../../src/definition/source-positions.js'

describe('IPv4 arithmetic', () => {
  it('parses addresses and refuses malformed ones', () => {
    assert.equal(parseIpv4('10.0.0.1'), 0x0a000001)
    assert.equal(parseIpv4('255.255.255.255'), 2 ** 32 - 1)
    for (const bad of ['256.0.0.1', '10.0.0', '10.0.0.01', 'a.b.c.d', '10.0.0.1 '])
      assert.equal(parseIpv4(bad), undefined, bad)
  })
  it('parses CIDRs into network and size', () => {
    const c = parseIpv4Cidr('10.210.3.7/16')!
    assert.equal(formatCidr(c), '10.210.0.0/16')
    assert.equal(c.size, 65536)
    assert.equal(parseIpv4Cidr('10.0.0.0/33'), undefined)
    assert.equal(parseIpv4Cidr('10.0.0.0'), undefined)
    assert.equal(parseIpv4Cidr('0.0.0.0/0')!.size, 2 ** 32)
  })
  it('tells overlapping from adjacent networks', () => {
    const a = parseIpv4Cidr('10.0.0.0/24')!
    assert.equal(cidrsOverlap(a, parseIpv4Cidr('10.0.1.0/24')!), false)
    assert.equal(cidrsOverlap(a, parseIpv4Cidr('10.0.0.128/25')!), true)
    assert.equal(cidrsOverlap(parseIpv4Cidr('10.0.0.0/8')!, a), true)
  })
})

describe('JSON pointers and source positions', () => {
  it('escapes ~ and / (RFC 6901) and round-trips', () => {
    assert.equal(pointer('pools', 'a/b~c', 0), '/pools/a~1b~0c/0')
    assert.deepEqual(parsePointer('/pools/a~1b~0c/0'), ['pools', 'a/b~c', '0'])
    assert.deepEqual(parsePointer(''), [])
    assert.ok(isWithin('/a/b', '/a') && isWithin('/a', '/a') && !isWithin('/ab', '/a'))
  })
  it('maps a pointer to the line and column of its value or key, else the nearest ancestor', () => {
    const positionOf = sourcePositions('a:\n  b:\n    - x\n    - y: 1\n')
    assert.deepEqual(positionOf('/a/b/1/y'), { line: 4, column: 10 })
    assert.deepEqual(positionOf('/a/b/1/y', { key: true }), { line: 4, column: 7 })
    assert.deepEqual(positionOf('/a/b/0'), { line: 3, column: 7 })
    assert.deepEqual(positionOf('/a/b/5'), { line: 3, column: 5 })
  })
})
