// NODE_SSH_USER_RESERVED: a node's ssh.user is never one of fleetkit's own service accounts, so the
// agent role can never reshape the account sync logs in with (issue 25).
import assert from 'node:assert/strict'

import { validateDefinitionText } from '../../../src/definition/load.js'
import {
  SERVICE_ACCOUNTS,
  sshUserNotServiceAccount,
} from '../../../src/definition/rules/ssh-user-not-service-account.js'
import { fixtureText, ruleContext, validDefinition } from '../../support/definition-fixture.js'

const pairs = (errors: Array<{ code: string; path: string }>) => errors.map((e) => [e.code, e.path])

describe("rule: nodes are not reached as fleetkit's service accounts (NODE_SSH_USER_RESERVED)", () => {
  it('accepts an operator account named fleetkit, any other account, and a node without ssh', () => {
    const d = validDefinition()
    d.nodes[0]!.ssh!.user = 'fleetkit'
    delete d.nodes[1]!.ssh
    assert.deepEqual(sshUserNotServiceAccount(ruleContext(d)), [])
    d.nodes[0]!.ssh!.user = 'fleetkit-ops'
    assert.deepEqual(sshUserNotServiceAccount(ruleContext(d)), [])
  })

  for (const account of ['fleetkit-agent', 'fleetkit-gateway']) {
    it(`refuses ssh.user ${account} and says what to name instead`, () => {
      const d = validDefinition()
      d.nodes[1]!.ssh!.user = account
      const errors = sshUserNotServiceAccount(ruleContext(d))
      assert.deepEqual(pairs(errors), [['NODE_SSH_USER_RESERVED', '/nodes/1/ssh/user']])
      assert.equal(errors[0]!.actual, account)
      assert.match(errors[0]!.message, new RegExp(`logs in as ${account}, fleetkit's own service account`))
      assert.match(errors[0]!.message, /name the operator's sudo account in ssh\.user/)
    })
  }

  it('names exactly the agent and gateway accounts', () => {
    assert.deepEqual([...SERVICE_ACCOUNTS], ['fleetkit-agent', 'fleetkit-gateway'])
  })

  it('fleetkit validate reports it with its line, among the semantic rules', () => {
    const text = fixtureText('ssh-user-root.yaml').replace('user: root', 'user: fleetkit-agent')
    const { errors } = validateDefinitionText(text, 'fleet.yaml')
    assert.deepEqual(pairs(errors), [['NODE_SSH_USER_RESERVED', '/nodes/1/ssh/user']])
    assert.equal(errors[0]!.check, 'definition:semantics')
    assert.equal(errors[0]!.line, 47)
  })
})
