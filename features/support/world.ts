// The cucumber World: a temp directory per scenario, the tree a rule runs on,
// and the last CLI run (an After hook fails a scenario whose command errored unasserted).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { After, Before, setDefaultTimeout, setWorldConstructor, World, type IWorldOptions } from '@cucumber/cucumber'

import type { RuleFinding } from '../../src/checks/rules/finding.js'
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

After(async function (this: FleetkitWorld) {
  await rm(this.tmp, { recursive: true, force: true })
  const unasserted = this.runs.filter((run) => run.exitCode !== 0 && !run.asserted)
  if (unasserted.length > 0) {
    const run = unasserted[0]!
    throw new Error(`fleetkit ${run.argv.join(' ')} exited ${run.exitCode} and no step asserted it:\n${run.stderr || run.stdout}`)
  }
})

export const fixturesDir = join(packageRoot, 'features', 'fixtures')
