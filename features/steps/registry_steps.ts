// Steps about the registries: which tree a rule reads, running a rule, its findings, and the
// runbook entry of every registered code (read in process: one CLI start proves the command).
import assert from 'node:assert/strict'
import { join } from 'node:path'

import { Given, Then, When } from '@cucumber/cucumber'

import { FAILURE_CODES, type FailureCode } from '../../src/checks/failure-codes.js'
import { FleetkitError } from '../../src/checks/fleetkit-error.js'
import { checkCheckIdOwners } from '../support/rules/check-id-owners.js'
import { checkCodeRunbooks } from '../support/rules/code-usage.js'
import { checkDocCommands } from '../support/rules/doc-commands.js'
import { checkDocPaths } from '../support/rules/doc-paths.js'
import { checkFingerprintCoverage } from '../support/rules/fingerprint-coverage.js'
import { formatFinding, type RuleFinding } from '../support/rules/finding.js'
import { checkRepairOwners } from '../support/rules/repair-owners.js'
import { checkManualSteps } from '../support/rules/manual-steps.js'
import { findRunbookEntry, loadRunbooks } from '../../src/checks/runbooks.js'
import { packageRoot } from '../../src/package-root.js'
import { fixturesDir, type FleetkitWorld } from '../support/world.js'

const RULES: Record<string, (root: string) => Promise<RuleFinding[]>> = {
  'codes-have-runbooks': checkCodeRunbooks,
  'docs-name-real-commands': (root) => checkDocCommands(root),
  'docs-name-real-paths': checkDocPaths,
  'check-ids-have-owners': checkCheckIdOwners,
  'manual-steps-match-checks': checkManualSteps,
  'repair-owners-resolve': checkRepairOwners,
  'role-changes-are-fingerprinted': checkFingerprintCoverage,
}

Given('the project tree', function (this: FleetkitWorld) {
  this.tree = packageRoot
})

Given('the fixture tree {string}', function (this: FleetkitWorld, name: string) {
  this.tree = join(fixturesDir, name)
})

When('the rule {string} runs', async function (this: FleetkitWorld, rule: string) {
  const check = RULES[rule]
  assert.ok(check, `no rule named ${rule}; known: ${Object.keys(RULES).join(', ')}`)
  this.findings = await check(this.tree)
})

Then('it finds nothing', function (this: FleetkitWorld) {
  this.findingsCounted = true
  assert.deepEqual(this.findings?.map(formatFinding), [])
})

Then('it reports {string}', function (this: FleetkitWorld, message: string) {
  const messages = (this.findings ?? []).map((f) => f.message)
  assert.ok(messages.includes(message), `expected a finding "${message}", got:\n${messages.join('\n') || '(none)'}`)
})

Then('it reports {int} finding(s)', function (this: FleetkitWorld, count: number) {
  this.findingsCounted = true
  assert.equal(this.findings?.length, count, (this.findings ?? []).map(formatFinding).join('\n'))
})

When('the runbook entry of every registered code is looked up', async function (this: FleetkitWorld) {
  const runbooks = await loadRunbooks()
  this.runbookEntries = new Map(Object.keys(FAILURE_CODES).map((code) => [code, findRunbookEntry(runbooks, code)]))
})

Then(
  'every code has a section that says what it means and how to confirm, fix and escalate',
  function (this: FleetkitWorld) {
    const entries = this.runbookEntries
    assert.ok(entries && entries.size === Object.keys(FAILURE_CODES).length)
    const incomplete = [...entries].flatMap(([code, entry]) => {
      if (!entry) return [`${code}: no line in docs/runbooks.md`]
      const missing = (['meaning', 'confirm', 'fix', 'escalate'] as const).filter(
        (field) => entry.section[field] === '',
      )
      return missing.length > 0 ? [`${code}: section "${entry.section.title}" lacks ${missing.join(', ')}`] : []
    })
    assert.deepEqual(incomplete, [])
  },
)

// `fleetkit runbook CODE` and `fleetkit checks` print the section's header as the code's title.
Then("every code's section header names the code", function (this: FleetkitWorld) {
  const entries = this.runbookEntries
  assert.ok(entries)
  const unnamed = [...entries].flatMap(([code, entry]) =>
    entry && !new RegExp(`\\b${code}\\b`).test(entry.section.title)
      ? [`${code}: header "${entry.section.title}" does not name it`]
      : [],
  )
  assert.deepEqual(unnamed, [])
})

// A script branches on the exit code a runbook line states (e.g. retries on 75).
Then("every exit code a runbook line states is the code's exit code", function (this: FleetkitWorld) {
  const entries = this.runbookEntries
  assert.ok(entries)
  const wrong = [...entries].flatMap(([code, entry]) => {
    const stated = entry && /\bExit code (\d+)\b/.exec(entry.line)
    const actual = new FleetkitError(code as FailureCode, '').exitCode
    return stated && Number(stated[1]) !== actual
      ? [`${code}: runbook says exit code ${stated[1]}, the code exits ${actual}`]
      : []
  })
  assert.deepEqual(wrong, [])
})
