import assert from 'node:assert/strict'

import type { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { assertNotExample } from '../../../src/definition/example-guard.js'
import { validDefinition } from '../../support/definition-fixture.js'

describe('assertNotExample: commands that reach real hosts refuse an example (DEFINITION_IS_EXAMPLE)', () => {
  it('passes a definition that is not marked, or marked false', () => {
    const d = validDefinition()
    assertNotExample(d, 'fleetkit sync')
    d.example = false
    assertNotExample(d, 'fleetkit sync')
  })

  it('refuses example: true, naming the command and the fleet, with the next step', () => {
    const d = validDefinition()
    d.example = true
    assert.throws(
      () => assertNotExample(d, 'fleetkit sync'),
      (e: FleetkitError) =>
        e.code === 'DEFINITION_IS_EXAMPLE' &&
        e.message ===
          'fleetkit sync refuses fleet "fixture": the definition says example: true, and fleetkit sync would reach real hosts or a provider' &&
        e.actions.includes('fleetkit runbook DEFINITION_IS_EXAMPLE'),
    )
  })
})
