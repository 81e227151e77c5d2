// A --json result that cannot be written (stdout a full disk) is said on stderr with its code,
// never silently: the command's change, if any, is committed before its document is printed.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'

import { packagePath } from '../../../src/package-root.js'
import { fleetkitEntry } from '../../support/cli.js'

describe('a --json result written to a full stdout (the real CLI)', function () {
  this.timeout(120_000)

  it('exits non-zero with OUTPUT_WRITE_FAILED on stderr, saying the work is done and only the report was lost', async () => {
    const full = openSync('/dev/full', 'w')
    try {
      const child = spawn(process.execPath, [fleetkitEntry(), 'version', '--json'], {
        cwd: packagePath(),
        stdio: ['ignore', full, 'pipe'],
      })
      let stderr = ''
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString()
      })
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
      assert.notEqual(code, 0, stderr)
      assert.match(
        stderr,
        /^Error \(OUTPUT_WRITE_FAILED\): could not write the --json result to standard output \(ENOSPC\); what the command did is done \(committed\), only its report was lost$/m,
      )
    } finally {
      closeSync(full)
    }
  })
})
