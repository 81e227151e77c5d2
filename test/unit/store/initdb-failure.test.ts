// initdb's failure, coded from its own output: a full disk is STATE_DISK_FULL (free space, run it again)
// whether the system said ENOSPC or PostgreSQL its short write; anything else STATE_EMBEDDED_START_FAILED.
import assert from 'node:assert/strict'

import { initdbFailure } from '../../../src/store/embedded/initdb.js'
import { embeddedServerPaths } from '../../../src/store/embedded/paths.js'

const paths = embeddedServerPaths('/srv/state')
const BOOTSTRAP = 'running bootstrap script ... 2026-12-03 10:00:00.000 UTC [4242] '

describe("initdb's failure (src/store/embedded/initdb.ts)", () => {
  it("a short write on a filling disk (PostgreSQL's 53100 'wrote only', no errno) is STATE_DISK_FULL with its line", () => {
    const stderr = [
      `${BOOTSTRAP}FATAL:  could not extend file "base/1/2689": wrote only 4096 of 8192 bytes at block 3`,
      '2026-12-03 10:00:00.000 UTC [4242] HINT:  Check free disk space.',
      'child process exited with exit code 1',
      'initdb: removing data directory "/srv/state/postgres/data.init-1-ab"',
    ].join('\n')
    const error = initdbFailure(stderr, 1, paths)
    assert.equal(error.code, 'STATE_DISK_FULL')
    assert.equal(error.exitCode, 74)
    assert.equal(
      error.message,
      'the embedded PostgreSQL data directory could not be created: the disk of /srv/state/postgres is full (FATAL: could not extend file "base/1/2689": wrote only 4096 of 8192 bytes at block 3); nothing was created',
    )
    assert.ok(error.actions[0]?.startsWith('free space on the filesystem of /srv/state/postgres'))
    assert.ok(!error.actions.some((action) => action.includes('DATABASE_URL')))
  })

  it('the hint alone (another short write) is a full disk too; ENOSPC as before', () => {
    const hinted = `${BOOTSTRAP}PANIC:  could not write to file "pg_wal/xlogtemp.1": wrote only 0 of 8192 bytes\nHINT:  Check free disk space.`
    assert.equal(initdbFailure(hinted, 1, paths).code, 'STATE_DISK_FULL')
    const enospc = `${BOOTSTRAP}FATAL:  could not write to file "pg_wal/xlogtemp.1": No space left on device`
    assert.equal(initdbFailure(enospc, 1, paths).code, 'STATE_DISK_FULL')
  })

  it("any other failure is STATE_EMBEDDED_START_FAILED with initdb's reason", () => {
    const error = initdbFailure(`${BOOTSTRAP}FATAL:  could not create directory "base/1": Permission denied`, 1, paths)
    assert.equal(error.code, 'STATE_EMBEDDED_START_FAILED')
    assert.match(error.message, /failed: FATAL: could not create directory "base\/1": Permission denied$/)
    // "wrote only" is PostgreSQL's wording only after its own prefix: not a line of anything else.
    const other = initdbFailure('initdb: error: something wrote only 1 of 2 bytes at block 3', 1, paths)
    assert.equal(other.code, 'STATE_EMBEDDED_START_FAILED')
  })
})
