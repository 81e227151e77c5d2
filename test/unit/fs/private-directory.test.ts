// The one writable-directory refusal: a key directory group or others may write is refused with the
// caller's own error and its mode; one only its owner may write, or one not there yet, is accepted.
import assert from 'node:assert/strict'
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { assertPkiDirectoryPrivate as assertAgentPkiDirectory } from '../../../src/agent/identity.js'
import { assertPrivateDirectory } from '../../../src/fs/private-directory.js'
import { assertPkiDirectoryPrivate as assertGatewayPkiDirectory } from '../../../src/pki/pki-files.js'

class Refused extends Error {
  constructor(readonly mode: string) {
    super(`refused ${mode}`)
  }
}

describe('fs: the private directory check', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-private-dir-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('accepts a directory only its owner may write, and one that does not exist yet', async () => {
    for (const mode of [0o700, 0o755, 0o711, 0o500]) {
      await chmod(dir, mode)
      await assertPrivateDirectory(dir, (shown) => new Refused(shown))
    }
    await assertPrivateDirectory(join(dir, 'absent'), (shown) => new Refused(shown))
  })

  it('refuses group or other write with the caller’s error and the mode in four digits', async () => {
    for (const mode of [0o770, 0o707, 0o777, 0o720, 0o1777]) {
      await chmod(dir, mode)
      await assert.rejects(
        assertPrivateDirectory(dir, (shown) => new Refused(shown)),
        (error: unknown) => error instanceof Refused && error.mode === `0${(mode & 0o777).toString(8)}`,
        mode.toString(8),
      )
    }
    await chmod(dir, 0o700)
  })

  it('throws what stat throws beyond a missing directory (never a silent pass)', async () => {
    const file = join(dir, 'file')
    await writeFile(file, '')
    await assert.rejects(
      assertPrivateDirectory(join(file, 'pki'), (shown) => new Refused(shown)),
      (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOTDIR',
    )
  })

  it('the agent and the gateway keep their own code and advice', async () => {
    await chmod(dir, 0o777)
    await assert.rejects(assertAgentPkiDirectory(dir), {
      code: 'AGENT_CONFIG_INVALID',
      message: `the agent PKI directory ${dir} is writable by group or others (mode 0777); refusing to keep a key there`,
    })
    await assert.rejects(assertGatewayPkiDirectory(dir), {
      code: 'CA_KEY_PERMISSIONS',
      message: `the PKI directory ${dir} is writable by group or others (mode 0777); refusing to use it`,
    })
    await chmod(dir, 0o700)
  })
})
