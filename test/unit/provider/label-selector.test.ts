// Hetzner Cloud's label selector grammar as the stub applies it.
import assert from 'node:assert/strict'

import { matchesLabels, parseLabelSelector } from '../../../src/provider/label-selector.js'

function matches(selector: string, labels: Record<string, string>): boolean {
  const requirements = parseLabelSelector(selector)
  assert.ok(requirements, `${selector} should parse`)
  return matchesLabels(requirements, labels)
}

describe('provider: label selectors', () => {
  const node = { 'fleetkit.node_id': 'build-01', 'fleetkit.pool': 'build', empty: '' }

  it('k=v and k==v match the value; k!=v matches another value or no label', () => {
    assert.equal(matches('fleetkit.pool=build', node), true)
    assert.equal(matches('fleetkit.pool==build', node), true)
    assert.equal(matches('fleetkit.pool=ingress', node), false)
    assert.equal(matches('fleetkit.pool!=ingress', node), true)
    assert.equal(matches('other!=x', node), true)
    assert.equal(matches('empty=', node), true)
  })

  it('k needs the label, !k its absence', () => {
    assert.equal(matches('fleetkit.node_id', node), true)
    assert.equal(matches('!fleetkit.node_id', node), false)
    assert.equal(matches('!other', node), true)
  })

  it('in and notin take a set; commas outside parentheses AND requirements', () => {
    assert.equal(matches('fleetkit.pool in (build,ingress)', node), true)
    assert.equal(matches('fleetkit.pool notin (build,ingress)', node), false)
    assert.equal(matches('fleetkit.pool in (build, ingress),fleetkit.node_id=build-01', node), true)
    assert.equal(matches('fleetkit.pool=build,!fleetkit.node_id', node), false)
  })

  it('refuses what is not a selector', () => {
    for (const bad of ['=x', 'a=b=c', 'a in b', 'a b', '']) assert.equal(parseLabelSelector(bad), undefined, bad)
  })
})
