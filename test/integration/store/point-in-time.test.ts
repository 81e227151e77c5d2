// Continuous archiving and the restore to a point in time (issue 24, item 2), on a real embedded
// server: `db archive enable` proves the archive_command and takes a base backup; rows written after
// it reach the archive as WAL; `db restore --to T` brings back exactly what was committed by T; a time
// past the archive's end is refused after the replay with the database put back as it was.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { withFileLock } from '../../../src/fs/file-lock.js'
import { enableArchiving, takeArchiveBaseBackup } from '../../../src/lifecycle/state/db-archive.js'
import { fileSha256 } from '../../../src/store/embedded/base-backup.js'
import { openDatabase, type Database } from '../../../src/store/database.js'
import { restoreToTime } from '../../../src/store/embedded/point-in-time.js'
import { embeddedServerPaths } from '../../../src/store/embedded/paths.js'
import { stopEmbeddedServer } from '../../../src/store/embedded/server.js'
import { appendEvent } from '../../../src/store/events.js'
import { readArchiverStatus, switchWal } from '../../../src/store/backup/wal-archive.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { eventually } from '../../support/eventually.js'

const hasCode = (code: string) => (error: unknown) => (error as { code?: string }).code === code

describe('continuous archiving and the restore to a point in time (real embedded PostgreSQL)', function () {
  this.timeout(240_000)
  let root: string
  let stateDir: string
  let archiveDir: string
  const quiet = { env: {}, now: () => new Date(), progress: () => undefined }

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleetkit-pitr-'))
    // The postgres user passes through (it runs the server and the archive_command).
    await chmod(root, 0o711)
    stateDir = join(root, 'state')
    archiveDir = join(root, 'archive')
  })
  after(async () => {
    await stopEmbeddedServer(stateDir).catch(() => undefined)
    await rm(root, { recursive: true, force: true })
  })

  const open = () => openDatabase({ stateDir, databaseUrl: '', max: 2, onIdleError: () => undefined })
  async function kinds(db: Database): Promise<string[]> {
    const { rows } = await db.pool.query<{ kind: string }>(
      `SELECT kind FROM events WHERE kind LIKE 'pitr_%' ORDER BY id`,
    )
    return rows.map((r) => r.kind)
  }
  /** Switches the segment out and waits until the archiver has it. */
  async function archiveNow(db: Database): Promise<void> {
    const wal = await switchWal(db.pool)
    await eventually('the segment to be archived', async () => {
      const status = await readArchiverStatus(db.pool)
      return status.lastArchivedWal !== null && status.lastArchivedWal >= wal
    })
  }

  let target: Date

  it('enable into a directory the server cannot write puts everything back as it was (ARCHIVE_NOT_WORKING)', async () => {
    const first = await open()
    await first.close()
    // mkdtemp makes it 0700 and root's: the postgres user cannot pass through to the wal/ inside.
    const closed = await mkdtemp(join(tmpdir(), 'fleetkit-closed-'))
    try {
      const held = await open()
      try {
        await assert.rejects(
          enableArchiving({
            ...quiet,
            pool: held.pool,
            stateDir,
            dir: join(closed, 'archive'),
            archiveTimeoutSeconds: 60,
          }),
          hasCode('ARCHIVE_NOT_WORKING'),
        )
      } finally {
        await held.close()
      }
      const db = await open()
      try {
        const status = await readArchiverStatus(db.pool)
        assert.equal(status.enabled, false)
        assert.equal(status.archiveCommand, '(disabled)')
        assert.deepEqual(await kinds(db), [])
      } finally {
        await db.close()
      }
      assert.ok(!(await readdir(join(stateDir, 'postgres'))).includes('archive.json'), 'nothing recorded')
    } finally {
      await rm(closed, { recursive: true, force: true })
    }
  })

  it('enable proves the archive_command with a real segment, records it, and takes a base backup', async () => {
    const cli = await runFleetkit(
      ['db', 'archive', 'enable', archiveDir, '--archive-timeout', '60', '--state-dir', stateDir, '--json'],
      { env: { DATABASE_URL: undefined } },
    )
    assert.equal(cli.code, 0, cli.stdout + cli.stderr)
    assertMatchesOutputSchema('db-archive-enable', cli.json)
    const enabled = cli.json.result as Awaited<ReturnType<typeof enableArchiving>>
    assert.equal(enabled.changed, true)
    const wal = await readdir(join(archiveDir, 'wal'))
    assert.ok(wal.includes(enabled.provedWith), `${enabled.provedWith} in ${wal.join(', ')}`)
    assert.ok((await readdir(join(archiveDir, 'base'))).includes(enabled.baseBackup.file))
    // Again with the same settings: nothing restarts, only a base backup is taken.
    const held = await open()
    const again = await enableArchiving({
      ...quiet,
      pool: held.pool,
      stateDir,
      dir: archiveDir,
      archiveTimeoutSeconds: 60,
    }).finally(() => held.close())
    assert.equal(again.changed, false)
    assert.notEqual(again.baseBackup.label, enabled.baseBackup.label)

    const status = await runFleetkit(['db', 'status', '--json', '--state-dir', stateDir], {
      env: { DATABASE_URL: undefined },
    })
    assert.equal(status.code, 0, status.stderr)
    assertMatchesOutputSchema('db-status', status.json)
    assert.equal(status.json.result.archive.enabled, true)
    assert.equal(status.json.result.archive.dir, archiveDir)
    assert.ok(status.json.result.archive.lastArchivedWal)
    assert.equal(status.json.result.archive.baseBackups.length, 2)
  })

  it('restore --to brings back what was committed by then and nothing after', async () => {
    const db = await open()
    try {
      await appendEvent(db.pool, { kind: 'pitr_before_backup' })
      const backup = await runFleetkit(['db', 'archive', 'base-backup', '--state-dir', stateDir, '--json'], {
        env: { DATABASE_URL: undefined },
      })
      assert.equal(backup.code, 0, backup.stdout + backup.stderr)
      assertMatchesOutputSchema('db-archive-base-backup', backup.json)
      await appendEvent(db.pool, { kind: 'pitr_kept' })
      const { rows } = await db.pool.query<{ t: Date }>('SELECT clock_timestamp() AS t')
      target = rows[0]!.t
      // Commit timestamps have microseconds, a Date milliseconds: the next commit must be past the rounding.
      await eventually('the database clock to pass the target', async () => {
        const r = await db.pool.query<{ t: Date }>('SELECT clock_timestamp() AS t')
        return r.rows[0]!.t.getTime() > target.getTime() + 1
      })
      await appendEvent(db.pool, { kind: 'pitr_lost' })
      assert.deepEqual(await kinds(db), ['pitr_before_backup', 'pitr_kept', 'pitr_lost'])
      await archiveNow(db)
    } finally {
      await db.close()
    }

    const cli = await runFleetkit(['db', 'restore', '--to', target.toISOString(), '--state-dir', stateDir, '--json'], {
      env: { DATABASE_URL: undefined },
    })
    assert.equal(cli.code, 0, cli.stdout + cli.stderr)
    assertMatchesOutputSchema('db-restore', cli.json)
    const restored = cli.json.result as Awaited<ReturnType<typeof restoreToTime>>
    assert.ok(restored.recoveredTo && new Date(restored.recoveredTo) <= target)
    assert.match(restored.keptAside ?? '', /data\.before-restore-/)
    const after = await open()
    try {
      assert.deepEqual(await kinds(after), ['pitr_before_backup', 'pitr_kept'])
      // The restored server promoted, writes, and archives on its new timeline.
      const { rows } = await after.pool.query<{ rec: boolean }>('SELECT pg_is_in_recovery() AS rec')
      assert.equal(rows[0]!.rec, false)
      await appendEvent(after.pool, { kind: 'pitr_after_restore' })
      await archiveNow(after)
      const settings = await after.pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_file_settings WHERE name IN ('restore_command', 'recovery_target_time')`,
      )
      assert.equal(Number(settings.rows[0]!.n), 0, 'the recovery settings left the configuration')
    } finally {
      await after.close()
    }
  })

  it('a time past the archive is refused after the replay, with the database put back as it was', async () => {
    const { rows } = await (async () => {
      const db = await open()
      try {
        return await db.pool.query<{ t: Date }>('SELECT clock_timestamp() AS t')
      } finally {
        await db.close()
      }
    })()
    await assert.rejects(
      restoreToTime({ stateDir, target: rows[0]!.t, now: new Date(), progress: () => undefined }),
      (error: unknown) => {
        assert.ok(hasCode('PITR_TARGET_NOT_REACHED')(error), String(error))
        // The server's reason, not the shutdown lines its log ends with.
        assert.match((error as Error).message, /: FATAL: recovery ended before configured recovery target was reached$/)
        return true
      },
    )
    const db = await open()
    try {
      assert.deepEqual(await kinds(db), ['pitr_before_backup', 'pitr_kept', 'pitr_after_restore'])
    } finally {
      await db.close()
    }
    const cli = await runFleetkit(['db', 'restore', '--to', '2026-12-04 09:30', '--state-dir', stateDir, '--json'], {
      env: { DATABASE_URL: undefined },
    })
    assert.equal(cli.code, 2, cli.stderr)
    assert.equal(cli.json.code, 'USAGE_INVALID')
    const before = await restoreToTime({
      stateDir,
      target: new Date(0),
      now: new Date(),
      progress: () => undefined,
    }).catch((error: unknown) => error)
    assert.ok(hasCode('PITR_NO_BASE_BACKUP')(before))
  })

  it('restore --to while another process holds the start lock gives up with STATE_EMBEDDED_BUSY, changing nothing', async () => {
    const paths = embeddedServerPaths(stateDir)
    const serverBefore = await readFile(join(paths.dataDir, 'postmaster.pid'), 'utf8')
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let holding!: () => void
    const taken = new Promise<void>((resolve) => (holding = resolve))
    // A live holder (this process): a gateway starting its embedded server, or a db stop.
    const holder = withFileLock(paths.lockFile, async () => {
      holding()
      await held
    })
    await taken
    try {
      await assert.rejects(
        restoreToTime({ stateDir, target, now: new Date(), progress: () => undefined, timeoutMs: 500 }),
        (error: unknown) => {
          assert.ok(error instanceof FleetkitError, String(error))
          assert.equal(error.code, 'STATE_EMBEDDED_BUSY')
          assert.deepEqual(error.data, { lockFile: paths.lockFile, holder: process.pid })
          assert.match(error.message, /this restore waits; nothing was changed$/)
          return true
        },
      )
    } finally {
      release()
      await holder
    }
    // The same server runs on the same data directory; the unpacked backup is gone.
    assert.equal(await readFile(join(paths.dataDir, 'postmaster.pid'), 'utf8'), serverBefore)
    assert.ok(!existsSync(join(paths.root, 'data.restoring')), 'the unpacked backup is removed')
    const db = await open()
    try {
      assert.deepEqual(await kinds(db), ['pitr_before_backup', 'pitr_kept', 'pitr_after_restore'])
    } finally {
      await db.close()
    }
  })

  it('restore --to into a state directory rebuilt as docs/state.md says: the password copied, --archive DIR', async () => {
    // A new machine: nothing of the old state directory but postgres/password (the base backup's
    // roles know only its hash), no data directory, no archive.json.
    const rebuilt = join(root, 'rebuilt')
    await mkdir(join(rebuilt, 'postgres'), { recursive: true, mode: 0o700 })
    await copyFile(join(stateDir, 'postgres', 'password'), join(rebuilt, 'postgres', 'password'))
    try {
      // Past the archive's end: refused after the replay, and with no data directory before, none after
      // (no empty database started in its place).
      const past = await runFleetkit(
        ['db', 'restore', '--to', new Date().toISOString(), '--archive', archiveDir, '--state-dir', rebuilt, '--json'],
        { env: { DATABASE_URL: undefined } },
      )
      assert.equal(past.json.code, 'PITR_TARGET_NOT_REACHED', past.stdout + past.stderr)
      assert.ok(!existsSync(join(rebuilt, 'postgres', 'data')), 'no data directory left or made')
      const cli = await runFleetkit(
        ['db', 'restore', '--to', target.toISOString(), '--archive', archiveDir, '--state-dir', rebuilt, '--json'],
        { env: { DATABASE_URL: undefined } },
      )
      assert.equal(cli.code, 0, cli.stdout + cli.stderr)
      assertMatchesOutputSchema('db-restore', cli.json)
      assert.equal(cli.json.result.keptAside, null, 'there was no data directory to keep aside')
      const db = await openDatabase({ stateDir: rebuilt, databaseUrl: '', max: 1, onIdleError: () => undefined })
      try {
        assert.deepEqual(await kinds(db), ['pitr_before_backup', 'pitr_kept'])
      } finally {
        await db.close()
      }
    } finally {
      await stopEmbeddedServer(rebuilt).catch(() => undefined)
    }
  })

  it('prune --keep 1 removes the older base backup and the WAL before the kept start (as PostgreSQL names it); earlier times are refused', async () => {
    // Two base backups begun in the same second (two operators): each its own file, both whole.
    const db = await open()
    const sameSecond = { ...quiet, now: () => new Date('2026-12-04T03:00:00Z'), pool: db.pool, stateDir }
    const both = await Promise.all([takeArchiveBaseBackup(sameSecond), takeArchiveBaseBackup(sameSecond)]).finally(() =>
      db.close(),
    )
    assert.deepEqual(both.map((b) => b.label).sort(), ['base-20261204T030000Z', 'base-20261204T030000Z-2'])
    for (const b of both) assert.equal(await fileSha256(join(archiveDir, 'base', b.file)), b.sha256)
    const walBefore = await readdir(join(archiveDir, 'wal'))
    const dry = await runFleetkit(
      ['db', 'archive', 'prune', '--keep', '1', '--dry-run', '--state-dir', stateDir, '--json'],
      {
        env: { DATABASE_URL: undefined },
      },
    )
    assert.equal(dry.code, 0, dry.stdout + dry.stderr)
    assertMatchesOutputSchema('db-archive-prune', dry.json)
    assert.deepEqual(await readdir(join(archiveDir, 'wal')), walBefore, 'a dry run removes nothing')
    const cli = await runFleetkit(['db', 'archive', 'prune', '--keep', '1', '--state-dir', stateDir, '--json'], {
      env: { DATABASE_URL: undefined },
    })
    assert.equal(cli.code, 0, cli.stdout + cli.stderr)
    const r = cli.json.result as { kept: string[]; removed: string[]; oldestKeptWal: string; removedWalFiles: number }
    assert.deepEqual({ ...cli.json.result, dryRun: true }, dry.json.result)
    assert.equal(r.removed.length, 4, 'two at enable, one before the restore, one of the same second')
    assert.equal(r.kept.length, 1)
    assert.ok(r.removedWalFiles > 0)
    const base = (await readdir(join(archiveDir, 'base'))).sort()
    assert.deepEqual(base, [`${r.kept[0]}.json`, `${r.kept[0]}.tar.gz`])
    const wal = await readdir(join(archiveDir, 'wal'))
    // PostgreSQL archived the kept backup's history file under its start segment's name: ours agrees.
    const history = wal.filter((name) => name.endsWith('.backup')).sort()
    assert.ok(history.length >= 1, wal.join(' '))
    assert.equal(history[0]!.slice(8, 24), r.oldestKeptWal)
    for (const name of wal.filter((n) => /^[0-9A-F]{24}$/.test(n))) assert.ok(name.slice(8) >= r.oldestKeptWal, name)
    assert.ok(wal.includes('00000002.history'), 'the timeline history stays')
    const kept = JSON.parse(await readFile(join(archiveDir, 'base', `${r.kept[0]}.json`), 'utf8')) as {
      stoppedAt: string
    }
    const earlier = await restoreToTime({
      stateDir,
      target: new Date(new Date(kept.stoppedAt).getTime() - 1),
      now: new Date(),
      progress: () => undefined,
    }).catch((error: unknown) => error)
    assert.ok(hasCode('PITR_NO_BASE_BACKUP')(earlier))
  })

  it('disable turns archiving off and keeps the archive; with DATABASE_URL every archive command is refused first', async () => {
    const off = await runFleetkit(['db', 'archive', 'disable', '--state-dir', stateDir, '--json'], {
      env: { DATABASE_URL: undefined },
    })
    assert.equal(off.code, 0, off.stdout + off.stderr)
    assertMatchesOutputSchema('db-archive-disable', off.json)
    assert.equal(off.json.result.changed, true)
    const db = await open()
    try {
      assert.equal((await readArchiverStatus(db.pool)).enabled, false)
    } finally {
      await db.close()
    }
    assert.ok((await readdir(join(archiveDir, 'base'))).length > 0, 'the archive stays')
    const refused = await runFleetkit(['db', 'archive', 'enable', archiveDir, '--state-dir', stateDir, '--json'], {
      env: { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' },
    })
    assert.equal(refused.json.code, 'ARCHIVE_NOT_EMBEDDED', refused.stdout + refused.stderr)
  })
})
