import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { embeddedServerPaths } from '../../../src/store/embedded/paths.js'
import { readPostmasterPid } from '../../../src/store/embedded/postmaster.js'

describe('readPostmasterPid', () => {
  let dir: string
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'fleetkit-pm-')) })
  afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

  it('reads PID, port and status from PostgreSQL\'s lock file', async () => {
    await writeFile(join(dir, 'postmaster.pid'), `4242\n${dir}\n1767225600\n41234\n\n127.0.0.1\n  1234567    98304\nready   \n`)
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

  it('lays the embedded server out under <state dir>/postgres', () => {
    const paths = embeddedServerPaths('/s')
    assert.deepEqual(paths, {
      stateDir: '/s', root: '/s/postgres', dataDir: '/s/postgres/data', passwordFile: '/s/postgres/password',
      serverFile: '/s/postgres/server.json', lockFile: '/s/postgres/start.lock', logFile: '/s/postgres/server.log', tmpDir: '/s/postgres/tmp',
    })
  })
})
