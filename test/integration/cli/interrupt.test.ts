// Ctrl-C and SIGTERM during the real `fleetkit validate --ansible`: a stand-in ansible-playbook that
// hangs (with a child of its own) is ended, the temporary directory is removed, the exit is 130/143.
import assert from 'node:assert/strict'
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { packagePath } from '../../../src/package-root.js'
import { assertMatchesOutputSchema, fleetkitEntry } from '../../support/cli.js'
import { eventually } from '../../support/eventually.js'
import { overlayEnv, startProcess } from '../../support/process.js'

/** Gone: no such process, or a zombie that has exited and waits for init to reap it. */
function processGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')
  } catch {
    return true
  }
}

describe('cli: Ctrl-C and SIGTERM end ansible and remove the temporary directory (real validate --ansible)', function () {
  this.timeout(90_000)
  let bin: string
  let tmp: string

  /** The stand-in records its own PID, its child's and its working directory (fleetkit's temporary one), then hangs. */
  function writeStandIn(ignoreSigterm: boolean): void {
    writeFileSync(
      join(bin, 'ansible-playbook'),
      [
        '#!/bin/sh',
        // An ignored signal stays ignored across exec: then neither the tool nor its child dies of SIGTERM.
        ...(ignoreSigterm ? ["trap '' TERM"] : []),
        `pwd > "${bin}/cwd"`,
        'sleep 300 &',
        `echo $! > "${bin}/child.pid"`,
        `echo $$ > "${bin}/playbook.pid.tmp" && mv "${bin}/playbook.pid.tmp" "${bin}/playbook.pid"`,
        'wait',
        '',
      ].join('\n'),
    )
    chmodSync(join(bin, 'ansible-playbook'), 0o755)
  }

  beforeEach(() => {
    bin = mkdtempSync(join(tmpdir(), 'fleetkit-slow-ansible-'))
    tmp = mkdtempSync(join(tmpdir(), 'fleetkit-interrupt-tmp-'))
    symlinkSync('/usr/bin/ansible-inventory', join(bin, 'ansible-inventory'))
  })

  afterEach(() => {
    for (const name of ['playbook.pid', 'child.pid']) {
      const file = join(bin, name)
      if (!existsSync(file)) continue
      const pid = Number(readFileSync(file, 'utf8'))
      if (!processGone(pid)) process.kill(pid, 'SIGKILL')
    }
    rmSync(bin, { recursive: true, force: true })
    rmSync(tmp, { recursive: true, force: true })
  })

  const cases = [
    { signal: 'SIGTERM', exitCode: 143, ignoreSigterm: false, what: '' },
    { signal: 'SIGINT', exitCode: 130, ignoreSigterm: false, what: '' },
    { signal: 'SIGTERM', exitCode: 143, ignoreSigterm: true, what: ' (an ansible that ignores SIGTERM is killed)' },
  ] as const
  for (const { signal, exitCode, ignoreSigterm, what } of cases) {
    it(`${signal}: exits ${exitCode} with COMMAND_INTERRUPTED after ending ansible-playbook and its child and removing the temporary directory${what}`, async () => {
      writeStandIn(ignoreSigterm)
      const fleetkit = startProcess(
        process.execPath,
        [fleetkitEntry(), 'validate', '-d', 'examples/fleet.yaml', '--ansible', '--json'],
        {
          cwd: packagePath(),
          env: overlayEnv({ PATH: `${bin}:${process.env.PATH}`, TMPDIR: tmp }),
        },
      )

      await eventually('the stand-in ansible-playbook to start', () => existsSync(join(bin, 'playbook.pid')), {
        timeoutMs: 30_000,
        intervalMs: 50,
      })
      const playbookPid = Number(readFileSync(join(bin, 'playbook.pid'), 'utf8'))
      const childPid = Number(readFileSync(join(bin, 'child.pid'), 'utf8'))
      const workDir = readFileSync(join(bin, 'cwd'), 'utf8').trim()
      assert.ok(workDir.startsWith(join(tmp, 'fleetkit-ansible-')), workDir)
      assert.ok(existsSync(workDir))
      assert.ok(!processGone(playbookPid) && !processGone(childPid))

      // fleetkit itself ends ansible (SIGKILL after its own grace): no SIGKILL from here before the test's timeout.
      await fleetkit.stop(signal, 80_000)
      assert.equal(fleetkit.exit()?.code, exitCode, fleetkit.stderr())
      assert.ok(processGone(playbookPid), 'ansible-playbook still runs')
      assert.ok(processGone(childPid), "ansible-playbook's child still runs")
      assert.equal(existsSync(workDir), false, 'the temporary directory is left behind')
      assert.deepEqual(
        readdirSync(tmp).filter((n) => n.startsWith('fleetkit-')),
        [],
      )
      const json = JSON.parse(fleetkit.stdout()) as {
        code: string
        exitCode: number
        status: number
        data: { signal: string }
      }
      assertMatchesOutputSchema('validate', json)
      assert.equal(json.code, 'COMMAND_INTERRUPTED')
      assert.equal(json.exitCode, exitCode)
      assert.equal(json.status, exitCode)
      assert.deepEqual(json.data, { signal })
    })
  }
})
