// Steps about the registries: which tree a rule reads, running a rule, its findings.
import assert from 'node:assert/strict'
import { join } from 'node:path'

import { Given, Then, When } from '@cucumber/cucumber'

import { checkCheckIdOwners } from '../../src/checks/rules/check-id-owners.js'
import { checkCodeRunbooks } from '../../src/checks/rules/code-usage.js'
import { checkDocCommands } from '../../src/checks/rules/doc-commands.js'
import { formatFinding, type RuleFinding } from '../../src/checks/rules/finding.js'
import { checkManualSteps } from '../../src/checks/rules/manual-steps.js'
import { packageRoot } from '../../src/package-root.js'
import { fixturesDir, type FleetkitWorld } from '../support/world.js'

const RULES: Record<string, (root: string) => Promise<RuleFinding[]>> = {
  'codes-have-runbooks': checkCodeRunbooks,
  'docs-name-real-commands': (root) => checkDocCommands(root),
  'check-ids-have-owners': checkCheckIdOwners,
  'manual-steps-match-checks': checkManualSteps,
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
  assert.deepEqual(this.findings?.map(formatFinding), [])
})

Then('it reports {string}', function (this: FleetkitWorld, message: string) {
  const messages = (this.findings ?? []).map((f) => f.message)
  assert.ok(messages.includes(message), `expected a finding "${message}", got:\n${messages.join('\n') || '(none)'}`)
})

Then('it reports {int} finding(s)', function (this: FleetkitWorld, count: number) {
  assert.equal(this.findings?.length, count, (this.findings ?? []).map(formatFinding).join('\n'))
})
