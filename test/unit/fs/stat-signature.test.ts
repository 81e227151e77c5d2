import assert from 'node:assert/strict'
import { chmod, mkdtemp, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { SETTLE_MS, statSignature } from '../../../src/fs/stat-signature.js'

describe('fs: stat signature (what tells a reload the files are as it last read them)', () => {
  let dir: string
  const later = () => Date.now() + SETTLE_MS + 1000
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-statsig-'))
  })
  afterEach(() => rm(dir, { recursive: true, force: true }))

  it('is not given while a file changed within SETTLE_MS (its timestamp could hide the next change)', async () => {
    await writeFile(join(dir, 'a'), 'one')
    assert.equal(await statSignature([join(dir, 'a')], Date.now()), undefined)
    assert.ok(await statSignature([join(dir, 'a')], later()))
  })

  it('stays the same for untouched files; a missing one is part of it', async () => {
    await writeFile(join(dir, 'a'), 'one')
    const paths = [dir, join(dir, 'a'), join(dir, 'missing')]
    const first = await statSignature(paths, later())
    assert.match(first!, /\|-$/)
    assert.equal(await statSignature(paths, later()), first)
  })

  it('changes with a rewrite of the same bytes, a rename over the file, a chmod, and a file appearing', async () => {
    const a = join(dir, 'a')
    await writeFile(a, 'one')
    const paths = [dir, a, join(dir, 'b')]
    const changes: (() => Promise<void>)[] = [
      () => writeFile(a, 'one'),
      async () => {
        await writeFile(join(dir, 'tmp'), 'one')
        await rename(join(dir, 'tmp'), a)
      },
      () => chmod(a, 0o600),
      () => writeFile(join(dir, 'b'), ''),
    ]
    for (const change of changes) {
      const before = await statSignature(paths, later())
      // The ctime moves on at the file system's tick: wait one out so the change is in a later one.
      await new Promise((resolve) => setTimeout(resolve, 20))
      await change()
      assert.notEqual(await statSignature(paths, later()), before, change.toString())
    }
  })
})
