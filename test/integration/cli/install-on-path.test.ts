// The README's install line (ending in `fleetkit demo`) leaves a `fleetkit` executable on PATH: its `npm install -g .` step,
// run into a temporary prefix (not the machine's), then `fleetkit` by name from another directory.
import assert from 'node:assert/strict'
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'

import { packagePath } from '../../../src/package-root.js'
import { fleetkitEntry } from '../../support/cli.js'
import { overlayEnv, runProcess } from '../../support/process.js'

/** The README's one-line install command (the code block under "On a fresh machine"). */
async function readmeInstallLine(): Promise<string> {
  const readme = await readFile(packagePath('README.md'), 'utf8')
  const line = readme.split('\n').find((l) => l.startsWith('npm ci && '))
  assert.ok(line, 'README.md has no install line starting "npm ci && "')
  return line
}

describe('install: the README puts fleetkit on PATH', function () {
  this.timeout(180_000)
  let prefix: string
  let elsewhere: string

  before(async () => {
    prefix = await mkdtemp(join(tmpdir(), 'fleetkit-prefix-'))
    elsewhere = await mkdtemp(join(tmpdir(), 'fleetkit-elsewhere-'))
  })
  after(async () => {
    await rm(prefix, { recursive: true, force: true })
    await rm(elsewhere, { recursive: true, force: true })
  })

  it("the README's `npm install -g .` step links a `fleetkit` that runs by name from any directory", async () => {
    const steps = (await readmeInstallLine()).split(' && ')
    assert.deepEqual(steps.slice(0, 3), ['npm ci', 'npm run build', 'npm install -g .'])
    // Its last step is the demo, which test/integration/demo.test.ts runs to its end; here a cheap command proves the PATH.
    assert.equal(steps[3], 'fleetkit demo')
    // The built CLI is what a global install runs (npm test builds before this suite).
    assert.equal(fleetkitEntry(), packagePath('bin', 'run.js'), 'dist/ is not current: run `npm run build` first')

    // --prefix: the machine's own global prefix stays untouched; --offline: a link needs no registry.
    const install = await runProcess('npm', ['install', '-g', '--prefix', prefix, '--offline', '.'], {
      cwd: packagePath(),
      timeoutMs: 120_000,
    })
    assert.equal(install.code, 0, install.stdout + install.stderr)
    assert.equal(await realpath(join(prefix, 'bin', 'fleetkit')), await realpath(packagePath('bin', 'run.js')))

    // NODE_OPTIONS may carry a test runner's loader; an operator's shell has none.
    const env = overlayEnv({
      PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH ?? ''}`,
      NODE_OPTIONS: undefined,
    })
    const run = await runProcess(
      'fleetkit',
      ['validate', '--definition', packagePath('examples', 'fleet.yaml'), '--json'],
      { cwd: elsewhere, env, timeoutMs: 60_000 },
    )
    assert.equal(run.code, 0, run.stderr)
    assert.equal(JSON.parse(run.stdout).result.fleet, 'example')
  })
})
