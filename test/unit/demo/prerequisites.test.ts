import assert from 'node:assert/strict'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { assertPrerequisites } from '../../../src/demo/prerequisites.js'

describe('demo prerequisites', () => {
  it('passes with the tools on PATH (and the agent bundle built, as the test command does)', async () => {
    await assertPrerequisites(process.env)
  })

  it('names every missing tool in DEMO_PREREQUISITE_MISSING, with how to install them', async () => {
    await assert.rejects(assertPrerequisites({ PATH: '/nonexistent' }), (error: unknown) => {
      assert.ok(error instanceof FleetkitError)
      assert.equal(error.code, 'DEMO_PREREQUISITE_MISSING')
      assert.deepEqual(
        (error.data?.missing as string[]).filter((m) => !m.endsWith('.cjs')),
        ['bash', 'curl', 'openssl', 'zstd', 'tar', 'sha256sum', 'base64'],
      )
      assert.ok(error.actions.some((a) => a.includes('apt-get install')))
      return true
    })
  })

  it('names a temporary directory that is not one (TMPDIR naming nothing, or a file), with what to set', async () => {
    for (const temp of [join(tmpdir(), `fleetkit-no-such-dir-${process.pid}`), '/etc/hostname']) {
      await assert.rejects(assertPrerequisites(process.env, temp), (error: unknown) => {
        assert.ok(error instanceof FleetkitError)
        assert.equal(error.code, 'DEMO_PREREQUISITE_MISSING')
        assert.deepEqual(error.data?.missing, [`a writable temporary directory (${temp} is not one)`])
        assert.equal(
          error.actions[0],
          'export TMPDIR=/tmp   (or another directory this user can write), then run it again',
        )
        assert.ok(!error.actions.some((action) => action.includes('apt-get')))
        return true
      })
    }
  })
})
