// Steps that run the built `fleetkit` CLI (bin/run.js) as an operator would.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'

import { Then, When } from '@cucumber/cucumber'

import { FAILURE_CODES } from '../../src/checks/failure-codes.js'
import { packageRoot } from '../../src/package-root.js'
import type { CliRun, FleetkitWorld } from '../support/world.js'

const exec = promisify(execFile)
const BIN = join(packageRoot, 'bin', 'run.js')

export async function runFleetkit(argv: string[]): Promise<CliRun> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [BIN, ...argv], { cwd: packageRoot, env: { ...process.env, NODE_OPTIONS: '' } })
    return { argv, exitCode: 0, stdout, stderr, asserted: false }
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string }
    return { argv, exitCode: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '', asserted: false }
  }
}

function words(command: string): string[] {
  return command.replace(/^fleetkit\s+/, '').split(/\s+/).filter(Boolean)
}

When('I run {string}', async function (this: FleetkitWorld, command: string) {
  this.lastRun = await runFleetkit(words(command))
  this.runs.push(this.lastRun)
})

When('I run {string} for every registered code', async function (this: FleetkitWorld, command: string) {
  const codes = Object.keys(FAILURE_CODES)
  // A few processes at a time: each is a real cold start of the CLI.
  for (let i = 0; i < codes.length; i += 6) {
    const batch = await Promise.all(codes.slice(i, i + 6).map((code) => runFleetkit([...words(command), code, '--json'])))
    this.runs.push(...batch)
  }
})

Then('every run succeeds with the code and its runbook section', function (this: FleetkitWorld) {
  assert.ok(this.runs.length >= Object.keys(FAILURE_CODES).length)
  for (const run of this.runs) {
    run.asserted = true
    assert.equal(run.exitCode, 0, `fleetkit ${run.argv.join(' ')} failed:\n${run.stdout}${run.stderr}`)
    const out = JSON.parse(run.stdout) as { status: number; result: { code: string; section: string; confirm: string; fix: string } }
    assert.equal(out.status, 0)
    assert.equal(out.result.code, run.argv[1])
    assert.ok(out.result.section && out.result.confirm && out.result.fix, `incomplete runbook section for ${out.result.code}`)
  }
})

Then('it exits {int}', function (this: FleetkitWorld, code: number) {
  assert.ok(this.lastRun)
  this.lastRun.asserted = true
  assert.equal(this.lastRun.exitCode, code, this.lastRun.stderr)
})

Then('the JSON error has code {string} and suggests {string}', function (this: FleetkitWorld, code: string, action: string) {
  assert.ok(this.lastRun)
  this.lastRun.asserted = true
  const out = JSON.parse(this.lastRun.stdout) as { code: string; actions: string[]; exitCode: number }
  assert.equal(out.code, code)
  assert.ok(out.actions.includes(action), `actions: ${out.actions.join(', ')}`)
})

Then('stderr says {string}', function (this: FleetkitWorld, text: string) {
  assert.ok(this.lastRun)
  this.lastRun.asserted = true
  assert.ok(this.lastRun.stderr.includes(text), `stderr was:\n${this.lastRun.stderr}`)
})
