// Steps that run the built `fleetkit` CLI (bin/run.js) as an operator would.
import assert from 'node:assert/strict'
import { join } from 'node:path'

import { Then, When } from '@cucumber/cucumber'

import { findRunbookEntry, loadRunbooks } from '../../src/checks/runbooks.js'
import { packageRoot } from '../../src/package-root.js'
import { overlayEnv, runProcess } from '../../test/support/process.js'
import type { CliRun, FleetkitWorld } from '../support/world.js'

const BIN = join(packageRoot, 'bin', 'run.js')

export async function runFleetkit(argv: string[]): Promise<CliRun> {
  // NODE_OPTIONS carries cucumber's tsx loader; the operator's CLI runs without it.
  const result = await runProcess(process.execPath, [BIN, ...argv], {
    cwd: packageRoot,
    env: overlayEnv({ NODE_OPTIONS: '' }),
  })
  return { argv, exitCode: result.code, stdout: result.stdout, stderr: result.stderr, asserted: false }
}

function words(command: string): string[] {
  return command
    .replace(/^fleetkit\s+/, '')
    .split(/\s+/)
    .filter(Boolean)
}

When('I run {string}', async function (this: FleetkitWorld, command: string) {
  this.lastRun = await runFleetkit(words(command))
  this.runs.push(this.lastRun)
})

Then('it exits {int}', function (this: FleetkitWorld, code: number) {
  assert.ok(this.lastRun)
  this.lastRun.asserted = true
  assert.equal(this.lastRun.exitCode, code, this.lastRun.stderr)
})

Then('the JSON result is the runbook entry of {string}', async function (this: FleetkitWorld, code: string) {
  assert.ok(this.lastRun)
  this.lastRun.asserted = true
  const out = JSON.parse(this.lastRun.stdout) as {
    status: number
    result: { code: string; section: string; line: string; fix: string }
  }
  const entry = findRunbookEntry(await loadRunbooks(), code)
  assert.ok(entry, `docs/runbooks.md has no entry for ${code}`)
  assert.equal(out.status, 0)
  assert.deepEqual(
    { code: out.result.code, section: out.result.section, line: out.result.line, fix: out.result.fix },
    { code, section: entry.section.title, line: entry.line, fix: entry.section.fix },
  )
})

Then(
  'the JSON error has code {string} and suggests {string}',
  function (this: FleetkitWorld, code: string, action: string) {
    assert.ok(this.lastRun)
    this.lastRun.asserted = true
    const out = JSON.parse(this.lastRun.stdout) as { code: string; actions: string[]; exitCode: number }
    assert.equal(out.code, code)
    assert.ok(out.actions.includes(action), `actions: ${out.actions.join(', ')}`)
  },
)

Then('stderr says {string}', function (this: FleetkitWorld, text: string) {
  assert.ok(this.lastRun)
  this.lastRun.asserted = true
  assert.ok(this.lastRun.stderr.includes(text), `stderr was:\n${this.lastRun.stderr}`)
})
