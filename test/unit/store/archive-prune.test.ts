// Pruning the WAL archive on a synthetic archive (files only, as the prune itself): which base
// backups and WAL files go, what a damaged backup changes, a dry run, and the lock a restore shares.
// The real server's naming of the start segment is checked in test/integration/store/point-in-time.test.ts.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { archiveLayout, type ArchiveLayout, withArchiveLock } from '../../../src/store/embedded/archive-dir.js'
import { pruneArchive, walPositionOf } from '../../../src/store/embedded/archive-prune.js'

const quiet = () => undefined

describe('db archive prune', () => {
  let root: string
  let layout: ArchiveLayout
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleetkit-prune-'))
    layout = archiveLayout(root)
    await mkdir(layout.baseDir)
    await mkdir(layout.walDir)
  })
  afterEach(() => rm(root, { recursive: true, force: true }))

  /** A base backup stopped on `day` (of December) whose start is `startLsn`. */
  async function backup(day: number, startLsn: string, options: { damaged?: boolean } = {}): Promise<string> {
    const label = `base-202612${String(day).padStart(2, '0')}T030000Z`
    const bytes = Buffer.from(`base backup of day ${day}`)
    await writeFile(join(layout.baseDir, `${label}.tar.gz`), options.damaged ? Buffer.from('other bytes') : bytes)
    const manifest = {
      format: 'fleetkit-base-backup-1',
      label,
      file: `${label}.tar.gz`,
      stoppedAt: new Date(Date.UTC(2026, 11, day, 3, 0, 5)).toISOString(),
      startLsn,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    }
    await writeFile(join(layout.baseDir, `${label}.json`), JSON.stringify(manifest))
    return label
  }
  async function wal(...names: string[]): Promise<void> {
    for (const name of names) await writeFile(join(layout.walDir, name), 'x'.repeat(10))
  }
  const list = async (dir: string) => (await readdir(dir)).sort()

  it('maps an LSN to the position of the 16 MiB segment holding it', () => {
    assert.equal(walPositionOf('0/2000028'), '0000000000000002')
    assert.equal(walPositionOf('0/FFFFFFFF'), '00000000000000FF')
    assert.equal(walPositionOf('1A/3000000'), '0000001A00000003')
    assert.throws(() => walPositionOf('0-2'), TypeError)
  })

  it('keeps the newest N whole backups and the WAL from the oldest kept start; history files stay', async () => {
    const b1 = await backup(1, '0/2000028')
    const b2 = await backup(2, '0/5000060')
    const b3 = await backup(3, '0/9000028')
    const before = [
      '000000010000000000000002',
      '000000010000000000000002.00000028.backup',
      '000000010000000000000004',
      '000000010000000000000004.part',
    ]
    const after = [
      '000000010000000000000005',
      '000000010000000000000005.00000060.backup',
      '000000010000000000000009',
      '00000002.history',
      '000000020000000000000006.partial',
      '00000002000000000000000A',
    ]
    await wal(...before, ...after)
    // What an interrupted base backup left, older and newer than the oldest kept.
    await writeFile(join(layout.baseDir, 'base-20261201T120000Z.tar.gz'), 'orphan')
    await writeFile(join(layout.baseDir, 'base-20261204T030000Z.tar.gz.part'), 'in progress')

    const dry = await pruneArchive({ layout, keep: 2, dryRun: true, progress: quiet })
    assert.deepEqual(dry.removed, [b1])
    assert.deepEqual(dry.kept, [b2, b3])
    assert.equal(dry.oldestKeptWal, '0000000000000005')
    assert.equal(dry.removedWalFiles, 4)
    assert.ok(dry.freedBytes > 0)
    assert.equal((await list(layout.walDir)).length, 10, 'a dry run removes nothing')
    assert.equal((await list(layout.baseDir)).length, 8)

    const done = await pruneArchive({ layout, keep: 2, dryRun: false, progress: quiet })
    assert.deepEqual({ ...done, dryRun: true }, dry)
    assert.deepEqual(await list(layout.walDir), after)
    assert.deepEqual(await list(layout.baseDir), [
      `${b2}.json`,
      `${b2}.tar.gz`,
      `${b3}.json`,
      `${b3}.tar.gz`,
      'base-20261204T030000Z.tar.gz.part',
    ])
    const again = await pruneArchive({ layout, keep: 2, dryRun: false, progress: quiet })
    assert.deepEqual([again.removed, again.removedWalFiles, again.freedBytes], [[], 0, 0], 'a second prune is a no-op')
  })

  it('a damaged backup is not counted toward --keep and stays; with fewer whole ones than asked nothing goes', async () => {
    const b1 = await backup(1, '0/2000028')
    const b2 = await backup(2, '0/5000060')
    const b3 = await backup(3, '0/9000028', { damaged: true })
    await wal('000000010000000000000002', '000000010000000000000005')
    const r = await pruneArchive({ layout, keep: 1, dryRun: false, progress: quiet })
    assert.deepEqual([r.removed, r.kept, r.damaged], [[b1], [b2, b3], [b3]])
    assert.deepEqual(await list(layout.walDir), ['000000010000000000000005'])

    const none = await pruneArchive({ layout, keep: 2, dryRun: false, progress: quiet })
    assert.deepEqual([none.removed, none.oldestKeptWal, none.removedWalFiles], [[], null, 0])
    assert.equal((await list(layout.baseDir)).length, 4)
  })

  it('waits for a restore holding the archive, then refuses with ARCHIVE_BUSY and removes nothing', async () => {
    await backup(1, '0/2000028')
    await backup(2, '0/5000060')
    await wal('000000010000000000000002')
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let holding!: () => void
    const taken = new Promise<void>((resolve) => (holding = resolve))
    const restore = withArchiveLock(layout, 1_000, async () => {
      holding()
      await held
    })
    await taken
    try {
      await assert.rejects(
        pruneArchive({ layout, keep: 1, dryRun: false, progress: quiet, lockTimeoutMs: 300 }),
        (error: unknown) => {
          assert.equal((error as { code?: string }).code, 'ARCHIVE_BUSY')
          assert.equal((error as { data?: { holder?: number } }).data?.holder, process.pid)
          return true
        },
      )
    } finally {
      release()
      await restore
    }
    assert.equal((await list(layout.baseDir)).length, 4)
    assert.deepEqual(await list(layout.walDir), ['000000010000000000000002'])
    const after = await pruneArchive({ layout, keep: 1, dryRun: false, progress: quiet })
    assert.equal(after.removed.length, 1, 'the lock is released')
  })
})
