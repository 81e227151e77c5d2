import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { makeDirectories } from '../../../src/fs/make-directories.js'

const modeOf = (path: string) => statSync(path).mode & 0o777

describe('makeDirectories: mkdir -p -m as coreutils does it', () => {
  let dir: string
  let umask: number
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fleetkit-mkdirs-'))
    // A known umask, so the parents' default mode is known (restored after each test).
    umask = process.umask(0o022)
  })
  afterEach(() => {
    process.umask(umask)
    rmSync(dir, { recursive: true, force: true })
  })

  it('gives the directory its mode and the parents it makes the default: a private leaf under passable parents', async () => {
    const leaf = join(dir, 'srv', 'fleetkit', 'state')
    await makeDirectories(leaf, 0o700)
    assert.equal(modeOf(leaf), 0o700)
    assert.equal(modeOf(join(dir, 'srv')), 0o755)
    assert.equal(modeOf(join(dir, 'srv', 'fleetkit')), 0o755)
  })

  it('gives the parents their own mode when asked (a private extraction)', async () => {
    await makeDirectories(join(dir, 'a', 'b'), 0o700, 0o700)
    assert.equal(modeOf(join(dir, 'a')), 0o700)
    assert.equal(modeOf(join(dir, 'a', 'b')), 0o700)
  })

  it('keeps an existing directory as it is, and is idempotent', async () => {
    const existing = join(dir, 'kept')
    mkdirSync(existing, { mode: 0o750 })
    await makeDirectories(existing, 0o700)
    await makeDirectories(existing, 0o700)
    assert.equal(modeOf(existing), 0o750)
  })

  it('refuses a file in the way with EEXIST (the path itself) or ENOTDIR (a parent), as mkdir does', async () => {
    const file = join(dir, 'file')
    writeFileSync(file, 'x')
    await assert.rejects(makeDirectories(file), (e: NodeJS.ErrnoException) => e.code === 'EEXIST' && e.path === file)
    await assert.rejects(makeDirectories(join(file, 'below')), (e: NodeJS.ErrnoException) => e.code === 'ENOTDIR')
  })

  it('fails, rather than retrying forever, where a directory refuses new entries with ENOENT (/proc)', async () => {
    // node's own fs.mkdir('/proc/1/state', { recursive: true }) never returns here.
    await assert.rejects(makeDirectories('/proc/1/state', 0o700), (e: NodeJS.ErrnoException) => e.code === 'ENOENT')
  })

  it('makes a directory that appears meanwhile without complaint (two callers at once)', async () => {
    const leaf = join(dir, 'x', 'y', 'z')
    await Promise.all([makeDirectories(leaf, 0o700), makeDirectories(leaf, 0o700), makeDirectories(leaf)])
    assert.ok(statSync(leaf).isDirectory())
  })
})
