// The cucumber World: a temp directory per scenario, the tree a rule runs on, its findings and
// the last CLI run. After hooks fail a scenario whose command errored unasserted, or whose rule
// findings were never counted (a negative scenario must say exactly how many it expects).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import {
  After,
  Before,
  Status,
  setDefaultTimeout,
  setWorldConstructor,
  World,
  type IWorldOptions,
} from '@cucumber/cucumber'

import type { RuleFinding } from './rules/finding.js'
import type { RunbookEntry } from '../../src/checks/runbooks.js'
import { packageRoot } from '../../src/package-root.js'

export interface CliRun {
  argv: string[]
  exitCode: number
  stdout: string
  stderr: string
  /** Set by any step that looked at the outcome, so the After hook knows a failure was expected. */
  asserted: boolean
}

export class FleetkitWorld extends World {
  tmp = ''
  tree = packageRoot
  findings: RuleFinding[] | undefined
  /** Set by the steps that assert the exact number of findings ("it finds nothing", "it reports N findings"). */
  findingsCounted = false
  /** Registered code -> its runbook entry (undefined when docs/runbooks.md has none). */
  runbookEntries: Map<string, RunbookEntry | undefined> | undefined
  lastRun: CliRun | undefined
  runs: CliRun[] = []

  constructor(options: IWorldOptions) {
    super(options)
  }
}

setWorldConstructor(FleetkitWorld)
// Steps run real processes (the CLI, servers); none waits on a sleep.
setDefaultTimeout(120_000)

Before(async function (this: FleetkitWorld) {
  this.tmp = await mkdtemp(join(tmpdir(), 'fleetkit-feature-'))
})

After(async function (this: FleetkitWorld, { result }) {
  await rm(this.tmp, { recursive: true, force: true })
  const unasserted = this.runs.filter((run) => run.exitCode !== 0 && !run.asserted)
  if (unasserted.length > 0) {
    const run = unasserted[0]!
    throw new Error(
      `fleetkit ${run.argv.join(' ')} exited ${run.exitCode} and no step asserted it:\n${run.stderr || run.stdout}`,
    )
  }
  // "it reports X" alone would still pass if the rule also reported something it should not.
  if (result?.status === Status.PASSED && this.findings !== undefined && !this.findingsCounted) {
    throw new Error(
      `the rule reported ${this.findings.length} finding(s) and no step asserted how many (add "it reports N findings")`,
    )
  }
})

export const fixturesDir = join(packageRoot, 'features', 'fixtures')
