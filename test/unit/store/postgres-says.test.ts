// Reading PostgreSQL's own output (src/store/embedded/postgres-says.ts): the line that says why a start
// failed, and whether that is a full disk.
import assert from 'node:assert/strict'
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { firstFatalLine, saysDiskFull } from '../../../src/store/embedded/postgres-says.js'
import { logReason, logSize } from '../../../src/store/embedded/process.js'

describe("PostgreSQL's own words (src/store/embedded/postgres-says.ts)", () => {
  it('names the first FATAL or PANIC line of a failed start, not the shutdown lines after it', () => {
    // A restart after a PANIC on a full disk: recovery cannot write, the server gives up.
    const recovery = [
      '2026-12-03 20:00:00.100 UTC [77] LOG:  database system was not properly shut down; automatic recovery in progress',
      '2026-12-03 20:00:00.120 UTC [77] FATAL:  could not write to file "pg_wal/xlogtemp.77": No space left on device',
      '2026-12-03 20:00:00.130 UTC [76] LOG:  startup process (PID 77) exited with exit code 1',
      '2026-12-03 20:00:00.131 UTC [76] LOG:  shutting down due to startup process failure',
      '2026-12-03 20:00:00.140 UTC [76] LOG:  database system is shut down',
    ].join('\n')
    const fatal = firstFatalLine(recovery)
    assert.equal(fatal, 'FATAL: could not write to file "pg_wal/xlogtemp.77": No space left on device')
    assert.ok(saysDiskFull(fatal!))
    const lock =
      '2026-12-03 20:00:01.000 UTC [80] FATAL:  could not write lock file "postmaster.pid": No space left on device\n'
    assert.equal(firstFatalLine(lock), 'FATAL: could not write lock file "postmaster.pid": No space left on device')
    assert.equal(
      firstFatalLine(
        '2026-12-03 20:00:00.000 UTC [1] PANIC:  could not write to file "pg_logical/x": wrote only 0 of 8192 bytes\n',
      ),
      'PANIC: could not write to file "pg_logical/x": wrote only 0 of 8192 bytes',
    )
    assert.equal(firstFatalLine('LOG:  database system is ready to accept connections\n'), undefined)
  })

  it('a full disk: ENOSPC, the short write of a growing file, or the hint; nothing else', () => {
    assert.ok(saysDiskFull('FATAL: could not extend file "base/5/16384": wrote only 4096 of 8192 bytes at block 12'))
    assert.ok(saysDiskFull('HINT:  Check free disk space.'))
    assert.ok(!saysDiskFull('FATAL: could not create lock file "postmaster.pid": Permission denied'))
    assert.ok(!saysDiskFull('FATAL: lock file "postmaster.pid" already exists'))
  })

  it("an error's reason from server.log: the FATAL line written since the offset, else the last lines", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleetkit-log-'))
    try {
      const log = join(dir, 'server.log')
      // An earlier run's FATAL (a client refused) is not this failure's reason.
      await writeFile(log, '2026-12-03 19:00:00.000 UTC [9] FATAL:  password authentication failed for user "x"\n')
      const from = logSize(log)
      // A replay that ends short of its target: the reason, then the lines that say only that it stopped.
      await appendFile(
        log,
        [
          '2026-12-03 20:00:00.100 UTC [77] LOG:  restored log file "000000010000000000000004" from archive',
          '2026-12-03 20:00:00.120 UTC [77] FATAL:  recovery ended before configured recovery target was reached',
          '2026-12-03 20:00:00.130 UTC [76] LOG:  startup process (PID 77) exited with exit code 1',
          '2026-12-03 20:00:00.131 UTC [76] LOG:  shutting down due to startup process failure',
          '2026-12-03 20:00:00.140 UTC [76] LOG:  database system is shut down',
          '',
        ].join('\n'),
      )
      assert.equal(logReason(log, from), 'FATAL: recovery ended before configured recovery target was reached')
      // No FATAL since the offset (an archive_command that failed): the last lines, as before.
      const later = logSize(log)
      await appendFile(
        log,
        '2026-12-03 20:01:00.000 UTC [80] LOG:  archive command failed with exit code 1\n' +
          '2026-12-03 20:01:00.000 UTC [80] DETAIL:  The failed archive command was: cp x y\n',
      )
      assert.equal(
        logReason(log, later),
        '2026-12-03 20:01:00.000 UTC [80] LOG:  archive command failed with exit code 1 | 2026-12-03 20:01:00.000 UTC [80] DETAIL:  The failed archive command was: cp x y',
      )
      assert.equal(logReason(join(dir, 'missing.log'), 0), 'no log output')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
