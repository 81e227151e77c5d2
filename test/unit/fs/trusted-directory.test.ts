import assert from 'node:assert/strict'
import { chmod, chown, mkdir, mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { findUntrustedDirectory, type TrustRules } from '../../../src/fs/trusted-directory.js'
import { assertPkiDirectoryPrivate } from '../../../src/pki/pki-files.js'

const me = process.getuid?.() ?? 0
/** Trusts every owner: the modes alone decide. */
const ANYONE: TrustRules = { trusted: () => true }

describe('findUntrustedDirectory', () => {
  let base: string
  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'fleetkit-trust-')))
  })
  afterEach(async () => {
    await rm(base, { recursive: true, force: true })
  })

  it('trusts a private directory of a trusted owner under the sticky, world-writable temp directory', async () => {
    assert.equal(await findUntrustedDirectory(base, ANYONE), undefined)
    assert.equal(await findUntrustedDirectory(join(base, 'not', 'made', 'yet'), ANYONE), undefined)
  })

  it('names the first directory, from the bottom, whose owner is not trusted', async () => {
    const inner = join(base, 'a', 'b')
    await mkdir(inner, { recursive: true })
    const problem = await findUntrustedDirectory(inner, { trusted: (uid) => uid !== me })
    assert.deepEqual(problem && [problem.path, problem.kind, problem.uid], [inner, 'owner', me])
    // Not made yet: judged by the nearest directory that exists.
    const unmade = await findUntrustedDirectory(join(inner, 'c', 'd'), { trusted: (uid) => uid !== me })
    assert.equal(unmade?.path, inner)
  })

  it('refuses the directory itself writable by others, even sticky, or by its group unless shared', async () => {
    const dir = join(base, 'state')
    await mkdir(dir)
    for (const [mode, shared, refused] of [
      [0o777, true, true],
      [0o1777, true, true],
      [0o770, false, true],
      [0o2770, true, false],
      [0o750, false, false],
    ] as const) {
      await chmod(dir, mode)
      const problem = await findUntrustedDirectory(dir, { trusted: () => true, sharedWithGroup: () => shared })
      assert.equal(problem?.kind, refused ? 'writable' : undefined, `mode ${mode.toString(8)}`)
      if (problem) assert.equal(problem.mode, mode.toString(8).padStart(4, '0'))
    }
  })

  it('refuses a directory above that others may write unless it is sticky; its group writing it is allowed', async () => {
    const above = join(base, 'above')
    const dir = join(above, 'state')
    await mkdir(dir, { recursive: true })
    await chmod(above, 0o777)
    assert.equal((await findUntrustedDirectory(dir, ANYONE))?.path, above)
    // Also for a state directory not made yet: its creator would make it in a directory others may rename.
    assert.equal((await findUntrustedDirectory(join(above, 'new'), ANYONE))?.path, above)
    await chmod(above, 0o1777)
    assert.equal(await findUntrustedDirectory(dir, ANYONE), undefined)
    await chmod(above, 0o775)
    assert.equal(await findUntrustedDirectory(dir, ANYONE), undefined)
  })

  if (process.getuid?.() === 0) {
    it('as root, a PKI directory under a directory another user owns is CA_KEY_PERMISSIONS, however private', async () => {
      const theirs = join(base, 'theirs')
      await mkdir(join(theirs, 'pki'), { recursive: true, mode: 0o700 })
      await chown(theirs, 65_534, 65_534)
      await assert.rejects(assertPkiDirectoryPrivate(join(theirs, 'pki')), (error: unknown) => {
        const e = error as { code?: string; message?: string; data?: { blockedBy?: string } }
        assert.equal(e.code, 'CA_KEY_PERMISSIONS')
        assert.equal(e.data?.blockedBy, theirs)
        assert.match(e.message ?? '', /belongs to uid 65534/)
        return true
      })
      // Not made yet (ca init): judged by the directory it would be made in.
      await assert.rejects(assertPkiDirectoryPrivate(join(theirs, 'new-pki')), { code: 'CA_KEY_PERMISSIONS' })
    })
  }
})
