// NODE_SSH_HOST_MISSING: ssh.host may be left out only by a node of a pool with a provider (its address
// is the server fleetkit provisions, recorded in the state); every other node's address is fleet.yaml's.
import assert from 'node:assert/strict'

import { validateDefinitionText } from '../../../src/definition/load.js'
import { sshHostDeclared } from '../../../src/definition/rules/ssh-host-declared.js'
import { fixtureText, ruleContext, validDefinition } from '../../support/definition-fixture.js'

const pairs = (errors: Array<{ code: string; path: string }>) => errors.map((e) => [e.code, e.path])

describe('rule: a node outside a pool with a provider declares its ssh.host (NODE_SSH_HOST_MISSING)', () => {
  it('accepts ssh without host on a node of a pool with a provider (providers.hetzner and the pool image)', () => {
    const d = validDefinition()
    delete d.nodes[0]!.ssh!.host
    assert.deepEqual(sshHostDeclared(ruleContext(d)), [])
  })

  it('refuses it in a pool without an image, or in a fleet without providers.hetzner, by its pointer', () => {
    const d = validDefinition()
    delete d.nodes[0]!.ssh!.host
    delete d.pools.build!.image
    const errors = sshHostDeclared(ruleContext(d))
    assert.deepEqual(pairs(errors), [['NODE_SSH_HOST_MISSING', '/nodes/0/ssh/host']])
    assert.match(errors[0]!.message, /node "build-1" declares ssh without host, and its pool "build" has no provider/)
    const e = validDefinition()
    delete e.nodes[1]!.ssh!.host
    delete e.providers
    assert.deepEqual(pairs(sshHostDeclared(ruleContext(e))), [['NODE_SSH_HOST_MISSING', '/nodes/1/ssh/host']])
  })

  it('leaves a node without ssh (a validate warning) and one of an undeclared pool (POOL_REFERENCE_UNKNOWN) alone', () => {
    const d = validDefinition()
    delete d.pools.build!.image
    delete d.nodes[0]!.ssh
    assert.deepEqual(sshHostDeclared(ruleContext(d)), [])
    const e = validDefinition()
    delete e.nodes[0]!.ssh!.host
    e.nodes[0]!.pool = 'nowhere'
    assert.deepEqual(sshHostDeclared(ruleContext(e)), [])
  })

  it('fleetkit validate: the file passes with a provider pool node without host, and is refused without the image', () => {
    const text = fixtureText('valid.yaml').replace(
      'ssh: { host: 10.1.0.11, user: fleetkit }',
      'ssh: { user: fleetkit }',
    )
    assert.deepEqual(validateDefinitionText(text, 'fleet.yaml').errors, [])
    const noImage = text.replace(/(serverType: cx32\n) {4}image: ubuntu-24.04\n/, '$1')
    const { errors } = validateDefinitionText(noImage, 'fleet.yaml')
    assert.deepEqual(pairs(errors), [['NODE_SSH_HOST_MISSING', '/nodes/0/ssh/host']])
    assert.equal(errors[0]!.check, 'definition:semantics')
  })
})
