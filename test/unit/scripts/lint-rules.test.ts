// The lint scripts `npm run lint` runs after eslint, Prettier and knip. lint-shell and lint-python each
// fail a file that breaks their rule and pass one that keeps it, and find their files in the checkout by
// name and first line; every lint script fails with one line when its tool is missing, so a machine
// without the tool never passes in silence.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'

import { packagePath } from '../../../src/package-root.js'
import { overlayEnv, runProcess } from '../../support/process.js'

interface Linter {
  script: string
  tool: string
  /** A file name and text that break the rule, and what the tool says about them. */
  violation: { name: string; text: string; finding: RegExp }
  clean: { name: string; text: string }
  /** Files the checkout has that the script must find, and files it must leave out. */
  finds: string[]
  leavesOut: string[]
}

const LINTERS: Linter[] = [
  {
    script: 'lint-shell',
    tool: 'shellcheck',
    violation: { name: 'bad.sh', text: '#!/bin/bash\ncd /tmp\necho here\n', finding: /SC2164/ },
    clean: { name: 'good.sh', text: '#!/bin/bash\ncd /tmp || exit\necho here\n' },
    finds: [
      'scripts/test',
      'scripts/install-test-deps',
      'scripts/cloud-init-schema',
      '.ci/run',
      'cloud-init/verify-release.sh',
      'cloud-init/agent-seed.sh.tmpl',
      'test/bats/helpers/setup_suite.bash',
      'test/bats/agent-seed.bats',
      'test/hosts/image/build-rootfs.sh',
      'ansible/roles/deadman/files/fleetkit-deadman',
      'ansible/roles/sshd/files/fleetkit-sshd',
    ],
    leavesOut: ['features/fixtures/shell-code-without-runbook/cloud-init/install.sh'],
  },
  {
    script: 'lint-python',
    tool: 'pyflakes3',
    violation: { name: 'bad.py', text: 'import os\n', finding: /'os' imported but unused/ },
    clean: { name: 'good.py', text: 'import os\n\nprint(os.sep)\n' },
    finds: [
      'ansible/callback_plugins/fleetkit_events.py',
      'ansible/playbooks/library/fleetkit_fingerprint.py',
      'ansible/roles/sshd/filter_plugins/sshd_effective.py',
    ],
    leavesOut: ['features/fixtures/role-change-unfingerprinted/ansible/callback_plugins/fleetkit_events.py'],
  },
]

/** The absolute path of COMMAND on this process's PATH, or undefined. */
function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, command))) return join(dir, command)
  }
  return undefined
}

describe('lint scripts: each rule fails a violation', function () {
  this.timeout(30_000)
  let dir: string

  /** Runs scripts/SCRIPT with a PATH that holds what it needs before it looks for its tool, and not the tool. */
  async function runWithoutTools(script: string) {
    const bin = join(dir, `bin-${script}`)
    mkdirSync(bin)
    const dirname = onPath('dirname')
    assert.ok(dirname, 'dirname is not on PATH')
    symlinkSync(dirname, join(bin, 'dirname'))
    const bash = onPath('bash')
    assert.ok(bash, 'bash is not on PATH')
    return runProcess(bash, [packagePath('scripts', script), join(dir, 'any')], {
      env: overlayEnv({ PATH: bin }),
      timeoutMs: 20_000,
    })
  }

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fleetkit-lint-rules-'))
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  for (const linter of LINTERS) {
    const run = (args: string[], env?: NodeJS.ProcessEnv) =>
      runProcess('bash', [packagePath('scripts', linter.script), ...args], { env, timeoutMs: 20_000 })

    describe(`scripts/${linter.script} (${linter.tool})`, () => {
      it(`fails a file that breaks the rule, with ${linter.tool}'s finding`, async () => {
        assert.ok(onPath(linter.tool), `${linter.tool} is not installed: scripts/install-test-deps installs it`)
        const file = join(dir, linter.violation.name)
        writeFileSync(file, linter.violation.text)
        const result = await run([file])
        assert.notEqual(result.code, 0, `${linter.script} passed a violation:\n${result.stdout}${result.stderr}`)
        assert.match(result.stdout + result.stderr, linter.violation.finding)
      })

      it('passes a file that keeps it', async () => {
        assert.ok(onPath(linter.tool), `${linter.tool} is not installed: scripts/install-test-deps installs it`)
        const file = join(dir, linter.clean.name)
        writeFileSync(file, linter.clean.text)
        const result = await run([file])
        assert.equal(result.code, 0, result.stdout + result.stderr)
      })

      it('finds its files in the checkout by name and first line, and leaves fixtures out', async () => {
        const result = await run(['--list'])
        assert.equal(result.code, 0, result.stderr)
        const listed = new Set(result.stdout.split('\n').filter(Boolean))
        for (const file of linter.finds) assert.ok(listed.has(file), `${file} not found: ${[...listed].join(' ')}`)
        for (const file of linter.leavesOut) assert.ok(!listed.has(file), `${file} is a fixture, listed`)
      })

      it(`fails with one line when ${linter.tool} is missing`, async () => {
        const result = await runWithoutTools(linter.script)
        assert.equal(result.code, 1)
        assert.equal(result.stdout, '')
        assert.match(result.stderr, new RegExp(`^${linter.script}: ${linter.tool} is not installed \\(.*\\)\\n$`))
      })
    })
  }

  // ansible-lint is no new rule (the lint step ran it before): only its missing binary is proven here.
  it('scripts/lint-ansible fails with one line when ansible-lint is missing', async () => {
    const result = await runWithoutTools('lint-ansible')
    assert.equal(result.code, 1)
    assert.equal(result.stdout, '')
    assert.match(result.stderr, /^lint-ansible: ansible-lint is not installed \(.*\)\n$/)
  })
})
