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

  it('runbook: a near-miss code names the nearest registered codes and their runbook commands', async () => {
    const run = await runFleetkit(['runbook', 'SYNC_PLAN_STAL', '--json'])
    assert.equal(run.code, 1)
    assertMatchesOutputSchema('runbook', run.json)
    assert.equal(run.json.code, 'RUNBOOK_CODE_UNKNOWN')
    assert.match(run.json.message, /did you mean "SYNC_PLAN_STALE"\?/)
    assert.equal(run.json.actions[0], 'fleetkit runbook SYNC_PLAN_STALE')
  })

  it("an unknown flag is USAGE_INVALID naming the command's nearest flag, on one line", async () => {
    const run = await runFleetkit(['runbook', 'USAGE_INVALID', '--jsn'])
    assert.equal(run.code, 2)
    const errorLines = run.stderr.split('\n').filter((l) => l.startsWith('Error ('))
    assert.deepEqual(errorLines, ['Error (USAGE_INVALID): Nonexistent flag: --jsn; did you mean "--json"?'])
  })
})
