import assert from 'node:assert/strict'

import { FAILURE_CODES } from '../../../src/checks/failure-codes.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'

describe('fleetkit checks and fleetkit runbook --json (the real commands)', () => {
  it('checks: lists every registered code with its runbook section, and every check ID with an owner', async () => {
    const run = await runFleetkit(['checks', '--json'])
    assert.equal(run.code, 0, run.stderr)
    assertMatchesOutputSchema('checks', run.json)
    const codes = run.json.result.codes as Array<{ code: string; runbook: string | null }>
    assert.deepEqual(codes.map((c) => c.code).sort(), Object.keys(FAILURE_CODES).sort())
    assert.deepEqual(
      codes.filter((c) => c.runbook === null),
      [],
    )
  })

  it('runbook: a known code gives its entry; an unknown one the error envelope', async () => {
    const known = await runFleetkit(['runbook', 'definition_invalid', '--json'])
    assert.equal(known.code, 0, known.stderr)
    assertMatchesOutputSchema('runbook', known.json)
    assert.equal(known.json.result.code, 'DEFINITION_INVALID')
    const unknown = await runFleetkit(['runbook', 'NO_SUCH_CODE', '--json'])
    assert.equal(unknown.code, 1)
    assertMatchesOutputSchema('runbook', unknown.json)
    assert.equal(unknown.json.code, 'RUNBOOK_CODE_UNKNOWN')
  })
})
