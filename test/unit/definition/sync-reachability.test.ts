import assert from 'node:assert/strict'

import { unreachableBySync } from '../../../src/definition/sync-reachability.js'
import { validDefinition } from '../../support/definition-fixture.js'

describe('validate: nodes fleetkit sync could never reach (NODE_UNREACHABLE_BY_SYNC)', () => {
  it('flags a node sync targets that declares no ssh block, by its pointer', () => {
    const d = validDefinition()
    assert.deepEqual(unreachableBySync(d), [])
    delete d.nodes[1]!.ssh
    const findings = unreachableBySync(d)
    assert.deepEqual(
      findings.map((f) => [f.code, f.path, f.node]),
      [['NODE_UNREACHABLE_BY_SYNC', '/nodes/1', 'db-1']],
    )
    // db-1's pool has a provider (providers.hetzner, an image): its address is its server's, only the account is missing.
    assert.match(
      findings[0]!.message,
      /add ssh: \{ user \} \(the account its seed creates; its address is the server fleetkit provisions\)/,
    )
    delete d.pools.database!.image
    assert.match(unreachableBySync(d)[0]!.message, /add ssh: \{ host, user \}/)
  })

  it('leaves a disabled node alone (sync skips it) and flags a drained one (sync still converges it)', () => {
    const d = validDefinition()
    delete d.nodes[1]!.ssh
    d.nodes[1]!.state = 'disabled'
    assert.deepEqual(unreachableBySync(d), [])
    d.nodes[1]!.state = 'drained'
    assert.equal(unreachableBySync(d).length, 1)
  })
})
