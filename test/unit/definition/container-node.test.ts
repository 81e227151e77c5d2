// A node's `container` declaration (issue 38): a boolean fact the schema accepts and nothing else,
// refused together with a node's own serverType (NODE_CONTAINER_PROVISIONED).
import assert from 'node:assert/strict'

import { validateDefinitionText } from '../../../src/definition/load.js'
import { containerNotProvisioned } from '../../../src/definition/rules/container-not-provisioned.js'
import { fixtureText, ruleContext, validDefinition } from '../../support/definition-fixture.js'

const pairs = (errors: Array<{ code: string; path: string }>) => errors.map((e) => [e.code, e.path])
const withContainer = (value: string) =>
  fixtureText('valid.yaml').replace(
    '  - id: build-1\n    pool: build\n',
    `  - id: build-1\n    pool: build\n    container: ${value}\n`,
  )

describe('definition: a node declares container: true', () => {
  it('validates container: true and false, and the typed definition carries it', () => {
    for (const value of ['true', 'false']) {
      const result = validateDefinitionText(withContainer(value), 'fleet.yaml')
      assert.deepEqual(result.errors, [], value)
      assert.equal(result.definition!.nodes[0]!.container, value === 'true')
    }
    assert.equal(
      validateDefinitionText(fixtureText('valid.yaml'), 'fleet.yaml').definition!.nodes[0]!.container,
      undefined,
    )
  })

  it('refuses anything but a boolean (a switch spelled as text is not the fact)', () => {
    for (const value of ['"yes"', '1', 'nspawn', '[true]']) {
      const { errors } = validateDefinitionText(withContainer(value), 'fleet.yaml')
      assert.deepEqual(pairs(errors), [['DEFINITION_VALUE_INVALID', '/nodes/0/container']], value)
    }
  })

  it("refuses container: true with a node's own serverType (a provider server is a VM), naming the way on", () => {
    const d = validDefinition()
    d.nodes[0]!.container = true
    assert.deepEqual(containerNotProvisioned(ruleContext(d)), [])
    d.nodes[0]!.serverType = 'cx32'
    const errors = containerNotProvisioned(ruleContext(d))
    assert.deepEqual(pairs(errors), [['NODE_CONTAINER_PROVISIONED', '/nodes/0/serverType']])
    assert.match(errors[0]!.message, /fleetkit seed build-1 --kind worker/)
    d.nodes[0]!.container = false
    assert.deepEqual(containerNotProvisioned(ruleContext(d)), [])
    const text = withContainer('true').replace(
      '    maxCapacity: { cpu: 3.5',
      '    serverType: cx32\n    maxCapacity: { cpu: 3.5',
    )
    assert.deepEqual(pairs(validateDefinitionText(text, 'fleet.yaml').errors), [
      ['NODE_CONTAINER_PROVISIONED', '/nodes/0/serverType'],
    ])
  })
})

describe('node provision: a declared container is not provisioned', () => {
  it('planProvision refuses it with PROVISION_INPUT_INVALID before any provider request, naming the way on', async () => {
    const { planProvision } = await import('../../../src/lifecycle/provision/provision-plan.js')
    const d = validDefinition()
    const node = { ...d.nodes[0]!, container: true }
    assert.throws(
      () => planProvision(d, node, {}),
      (e: { code?: string; message?: string; actions?: string[] }) =>
        e.code === 'PROVISION_INPUT_INVALID' &&
        /declares container: true, and a provider server is a VM; nothing was created/.test(e.message ?? '') &&
        (e.actions ?? []).some((a) => a.startsWith(`fleetkit seed ${node.id} --kind worker`)),
    )
    // Without it the plan goes on to its own checks (here: the fixture's pool names no region).
    assert.throws(
      () => planProvision(d, { ...node, container: false }, {}),
      (e: { message?: string }) => !/container/.test(e.message ?? ''),
    )
  })
})
