import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'

import { embeddedServerPaths } from '../../../src/store/embedded/paths.js'
import { isPostgresProcess, readPostmasterPid } from '../../../src/store/embedded/postmaster.js'

describe('readPostmasterPid', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-pm-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it("reads PID, port and status from PostgreSQL's lock file", async () => {
    await writeFile(
      join(dir, 'postmaster.pid'),
      `4242\n${dir}\n1767225600\n41234\n\n127.0.0.1\n  1234567    98304\nready   \n`,
    )
    assert.deepEqual(await readPostmasterPid(dir), { pid: 4242, port: 41234, status: 'ready' })
  })

  it('reports a server still starting, and nothing for a missing or garbled file', async () => {
    await writeFile(join(dir, 'postmaster.pid'), `4242\n${dir}\n1767225600\n41234\n\n127.0.0.1\n  1 2\nstarting\n`)
    assert.equal((await readPostmasterPid(dir))?.status, 'starting')
    await writeFile(join(dir, 'postmaster.pid'), 'garbage')
    assert.equal(await readPostmasterPid(dir), undefined)
    await rm(join(dir, 'postmaster.pid'))
    assert.equal(await readPostmasterPid(dir), undefined)
  })

  it('keeps every file of the embedded server apart, under <state dir>/postgres, and apart from another state directory', () => {
    const { stateDir, root, ...files } = embeddedServerPaths('/s')
    assert.equal(stateDir, '/s')
    assert.equal(relative('/s', root), 'postgres')
    const paths = Object.values(files)
    for (const path of paths) assert.ok(!relative(root, path).startsWith('..'), `${path} is outside ${root}`)
    assert.equal(new Set(paths).size, paths.length, 'two roles share one path')
    const other = Object.values(embeddedServerPaths('/t'))
    assert.deepEqual(
      paths.filter((path) => other.includes(path)),
      [],
    )
  })
})

describe('isPostgresProcess: the server of this data directory, not a reused PID', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-pm-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('is the postgres-named process whose working directory is the data directory, and no other', async () => {
    // A stand-in postmaster: a program named postgres…, started in its "data directory".
    const program = join(dir, 'postgres-standin')
    await copyFile('/bin/sleep', program)
    await chmod(program, 0o755)
    const ours = join(dir, 'data')
    const theirs = join(dir, 'other-data')
    await mkdir(ours)
    await mkdir(theirs)
    const server = spawn(program, ['30'], { cwd: theirs, stdio: 'ignore' })
    const sleeper = spawn('sleep', ['30'], { cwd: ours, stdio: 'ignore' })
    try {
      assert.equal(isPostgresProcess(server.pid!, theirs), true)
      assert.equal(isPostgresProcess(server.pid!, ours), false, 'another PostgreSQL server that took the stale PID')
      assert.equal(isPostgresProcess(sleeper.pid!, ours), false, 'another program that took the stale PID')
      assert.equal(isPostgresProcess(server.pid!, join(dir, 'gone')), false, 'a data directory that does not exist')
    } finally {
      server.kill('SIGKILL')
      sleeper.kill('SIGKILL')
    }
  })
})
