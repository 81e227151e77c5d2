// The one atomic writer: new files only (never through a planted link), modes kept, and a
// failure part-way through a set renames nothing and leaves no temp file behind.
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { seededRng } from '../../../src/config/rng.js'
import {
  commitStaged,
  tempPathFor,
  writeFileAtomic,
  writeFilesAtomic,
  writeStaged,
} from '../../../src/fs/atomic-file.js'

describe('atomic file writer', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-atomic-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('writes each file with its own mode and renames them in order', async () => {
    await writeFile(join(dir, 'ca.key'), 'old key', { mode: 0o600 })
    await writeFilesAtomic(dir, [
      { name: 'ca.key', content: 'new key', mode: 0o600 },
      { name: 'ca.pem', content: 'certificate', mode: 0o644 },
    ])
    assert.equal(await readFile(join(dir, 'ca.key'), 'utf8'), 'new key')
    assert.equal((await stat(join(dir, 'ca.pem'))).mode & 0o777, 0o644)
    assert.deepEqual((await readdir(dir)).sort(), ['ca.key', 'ca.pem'])
  })

  it('renames nothing and leaves no temp file when one file of the set cannot be written', async () => {
    await writeFile(join(dir, 'a.pem'), 'old a')
    // The second file's directory does not exist: its temp file cannot be created.
    await mkdir(join(dir, 'sub'))
    await assert.rejects(
      writeFilesAtomic(dir, [
        { name: 'a.pem', content: 'new a', mode: 0o600 },
        { name: 'sub/missing/b.pem', content: 'b', mode: 0o600 },
      ]),
      { code: 'ENOENT' },
    )
    assert.equal(await readFile(join(dir, 'a.pem'), 'utf8'), 'old a')
    assert.deepEqual((await readdir(dir)).sort(), ['a.pem', 'sub'])
  })

  it('never writes through a link planted at the temp name', async () => {
    const victim = join(dir, 'victim')
    await writeFile(victim, 'untouched')
    await symlink(victim, tempPathFor(join(dir, 'target'), seededRng('fixed')))
    await assert.rejects(writeFileAtomic(join(dir, 'target'), 'data', 0o600, seededRng('fixed')), { code: 'EEXIST' })
    assert.equal(await readFile(victim, 'utf8'), 'untouched')
  })

  it('replaces a leftover staged file (or link) instead of writing through it', async () => {
    const victim = join(dir, 'victim')
    await writeFile(victim, 'untouched')
    await symlink(victim, join(dir, 'agent.pem.staged'))
    await writeStaged(join(dir, 'agent.pem'), 'certificate', 0o600)
    await commitStaged(join(dir, 'agent.pem'))
    assert.equal(await readFile(victim, 'utf8'), 'untouched')
    assert.equal(await readFile(join(dir, 'agent.pem'), 'utf8'), 'certificate')
    assert.equal((await stat(join(dir, 'agent.pem'))).mode & 0o777, 0o600)
  })
})
