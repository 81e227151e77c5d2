// A worker is reached over SSH as its declared account: the schema requires ssh.user beside
// ssh.host, and a worker seed for a node that declares no ssh is a coded refusal, not a bad value.
import assert from 'node:assert/strict'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { validateDefinitionText } from '../../../src/definition/validate-text.js'
import { seededRng } from '../../../src/config/rng.js'
import { nodeTarget, workerSeedDocument } from '../../../src/render/seed-documents.js'
import { generateSshHostKey } from '../../../src/render/ssh-host-key.js'
import { fixtureText, validDefinition } from '../../support/definition-fixture.js'

describe('render: a worker needs its declared SSH account', () => {
  it('the schema refuses an ssh block without user, at that node', () => {
    const text = fixtureText('valid.yaml').replace(
      'ssh: { host: db-1.fleet.internal, user: fleetkit }',
      'ssh: { host: db-1.fleet.internal }',
    )
    assert.notEqual(text, fixtureText('valid.yaml'), 'the fixture has an ssh block with a user to remove')
    const { errors } = validateDefinitionText(text, 'fleet.yaml')
    assert.equal(errors.length, 1, JSON.stringify(errors))
    assert.equal(errors[0]!.code, 'DEFINITION_FIELD_MISSING')
    assert.equal(errors[0]!.path, '/nodes/1/ssh/user')
    assert.match(errors[0]!.message, /user/)
  })

  it('a worker seed for a node without ssh is WORKER_SSH_UNDECLARED, never SEED_VALUE_INVALID', () => {
    const definition = validDefinition()
    const node = definition.nodes.find((n) => n.ssh !== undefined)!
    delete node.ssh
    const target = nodeTarget(definition, node.id, undefined)
    assert.throws(
      () => workerSeedDocument(definition, target, generateSshHostKey(node.id, seededRng('worker-ssh')), false),
      (error: unknown) => {
        assert.ok(error instanceof FleetkitError)
        assert.equal(error.code, 'WORKER_SSH_UNDECLARED')
        assert.match(error.message, new RegExp(`node ${node.id} declares no ssh.user`))
        return true
      },
    )
  })
})
