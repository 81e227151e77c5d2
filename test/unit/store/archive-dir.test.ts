// The archive directory goes into a shell command PostgreSQL runs: only plain absolute paths are taken,
// and the commands copy atomically and refuse to overwrite another server's segment.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { LockTimeoutError, withFileLock } from '../../../src/fs/file-lock.js'
import {
  archiveCommand,
  checkArchiveDir,
  restoreCommand,
  withArchiveShipLock,
} from '../../../src/store/embedded/archive-dir.js'
import { embeddedServerPaths } from '../../../src/store/embedded/paths.js'
import { parseRestoreTime } from '../../../src/store/embedded/point-in-time.js'

const code = (fn: () => unknown) => {
  try {
    fn()
  } catch (error) {
    return (error as { code?: string }).code
  }
  return undefined
}

describe('the WAL archive directory and its commands', () => {
  it('takes plain absolute paths and refuses anything a shell or PostgreSQL would read otherwise', () => {
    assert.equal(checkArchiveDir('/var/backups/fleetkit-wal/'), '/var/backups/fleetkit-wal')
    for (const bad of [
      'relative/dir',
      "/tmp/it's",
      '/tmp/a b',
      '/tmp/%p',
      '/tmp/$(reboot)',
      '/tmp/../etc',
      '/tmp/a;b',
      '',
    ])
      assert.equal(
        code(() => checkArchiveDir(bad)),
        'ARCHIVE_DIR_INVALID',
        bad,
      )
  })

  it('archive_command copies a segment once, accepts the same bytes again and refuses other bytes', () => {
    const root = mkdtempSync(join(tmpdir(), 'fleetkit-archive-cmd-'))
    try {
      const archive = join(root, 'archive')
      mkdirSync(join(archive, 'wal'), { recursive: true })
      const data = join(root, 'data')
      mkdirSync(join(data, 'pg_wal'), { recursive: true })
      writeFileSync(join(data, 'pg_wal', '000000010000000000000001'), 'segment one')
      // PostgreSQL runs it with sh -c in the data directory, %p relative to it.
      const run = (name: string) =>
        execFileSync('sh', ['-c', archiveCommand(archive).replaceAll('%p', `pg_wal/${name}`).replaceAll('%f', name)], {
          cwd: data,
          stdio: 'pipe',
        })
      run('000000010000000000000001')
      assert.equal(readFileSync(join(archive, 'wal', '000000010000000000000001'), 'utf8'), 'segment one')
      run('000000010000000000000001')
      writeFileSync(join(data, 'pg_wal', '000000010000000000000001'), 'another server')
      assert.throws(() => run('000000010000000000000001'))
      assert.equal(readFileSync(join(archive, 'wal', '000000010000000000000001'), 'utf8'), 'segment one')

      const restored = join(data, 'pg_wal', 'RECOVERYXLOG')
      execFileSync('sh', [
        '-c',
        restoreCommand(archive).replaceAll('%f', '000000010000000000000001').replaceAll('%p', restored),
      ])
      assert.equal(readFileSync(restored, 'utf8'), 'segment one')
      assert.throws(() =>
        execFileSync(
          'sh',
          ['-c', restoreCommand(archive).replaceAll('%f', '000000010000000000000009').replaceAll('%p', restored)],
          {
            stdio: 'pipe',
          },
        ),
      )
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })

  it('--to takes ISO 8601 with a zone only', () => {
    assert.equal(parseRestoreTime('2026-12-04T09:30:00Z').toISOString(), '2026-12-04T09:30:00.000Z')
    assert.equal(parseRestoreTime('2026-12-04T10:30:00.5+01:00').toISOString(), '2026-12-04T09:30:00.500Z')
    for (const bad of ['2026-12-04 09:30', 'yesterday', '2026-13-04T09:30:00Z', ''])
      assert.equal(
        code(() => parseRestoreTime(bad)),
        'USAGE_INVALID',
        bad,
      )
  })

  it("ARCHIVE_BUSY names the archive's own lock only; a lock the work inside waited for keeps its error", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetkit-archive-lock-'))
    try {
      const paths = embeddedServerPaths(join(dir, 'state'))
      mkdirSync(paths.root, { recursive: true })
      // The server's start lock timing out inside a restore to a time is not the archive being busy.
      const inner = new LockTimeoutError(paths.lockFile, 4242)
      await assert.rejects(
        withArchiveShipLock(paths, () => Promise.reject(inner)),
        (error: unknown) => error === inner,
      )
      // Its own lock held by a live process (this one): ARCHIVE_BUSY, naming that lock (after the ship's 5 s wait).
      const own = join(paths.root, 'archive-ship.lock')
      await withFileLock(own, () =>
        assert.rejects(
          withArchiveShipLock(paths, () => Promise.resolve()),
          (error: unknown) => {
            assert.equal((error as { code?: string }).code, 'ARCHIVE_BUSY')
            assert.equal((error as { data?: { lock?: string } }).data?.lock, own)
            return true
          },
        ),
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
