// `db backup` interrupted and raced: what a killed backup left beside the output (a full copy of the
// CA key) is removed by the next backup into that directory when its writer is gone; Ctrl-C or
// SIGTERM (the command's abort signal) removes the staging before the command exits; and the PKI
// lock is held from before the database snapshot until the PKI is read, so no `ca rotate` lands
// between the two parts.
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import { open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'

import { FleetkitError, toFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { backupState, stagingPaths } from '../../../src/lifecycle/state/db-backup.js'
import { initPki } from '../../../src/pki/init-pki.js'
import { withPkiLock } from '../../../src/pki/pki-lock.js'
import { freshDatabasePerTest } from '../../support/postgres.js'

/** A PID above Linux's largest pid_max (2^22): no process has it. */
const DEAD_PID = 99_999_999

describe('db backup: interrupted runs and a rotation racing it', function () {
  this.timeout(120_000)
  const db = freshDatabasePerTest()
  const now = new Date('2026-12-01T00:00:00Z')
  let dir: string
  let pkiDir: string
  let out: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-backup-interrupted-'))
    pkiDir = join(dir, 'pki')
    await initPki({ pkiDir, now: new Date() })
    out = join(dir, 'backups')
    await mkdir(out)
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it("removes what killed backups on this host left (any output name, writer gone); keeps a live writer's, another host's and foreign names", async () => {
    // This host's tag, as the backup writes it: `.<name>.<host>-<pid>.<hex>.rows`.
    const tag = /^\.x\.(.+)-\d+\.[0-9a-f]{12}\.rows$/.exec(basename(stagingPaths(join(out, 'x')).rows))![1]!
    const dead = `.fleet-2026-11-30.tar.gz.${tag}-${DEAD_PID}.0123456789ab`
    const live = `.fleet-2026-11-30.tar.gz.${tag}-${process.ppid}.0123456789ab`
    const kept = [
      `${live}.tmp`,
      `${live}.rows`,
      `.fleet-2026-11-30.tar.gz.${tag}x-${DEAD_PID}.0123456789ab.tmp`, // another host
      `.fleet-2026-11-30.tar.gz.df1069d33e29.tmp`, // no PID: whose it is cannot be told
      `.fleet-2026-11-30.tar.gz.${tag}-${DEAD_PID}.fedcba987654.tmp`, // a link, not a file a backup writes
      'fleet-2026-11-29.tar.gz',
    ]
    await writeFile(join(out, `${dead}.tmp`), 'a whole backup with ca.key', { mode: 0o600 })
    await mkdir(join(out, `${dead}.rows`), { mode: 0o700 })
    await writeFile(join(out, `${dead}.rows`, 'nodes.jsonl'), '{}\n')
    await writeFile(join(out, `${live}.tmp`), 'being written')
    await mkdir(join(out, `${live}.rows`))
    await writeFile(join(out, kept[2]!), 'another host')
    await writeFile(join(out, kept[3]!), 'old name')
    await symlink(join(pkiDir, 'ca.key'), join(out, kept[4]!))
    await writeFile(join(out, kept[5]!), 'yesterday')

    const result = await backupState({ pool: db().pool, pkiDir, out: join(out, 'fleet-2026-12-01.tar.gz'), now })
    assert.deepEqual(result.removedStaleFiles, [`${dead}.rows`, `${dead}.tmp`])
    assert.deepEqual((await readdir(out)).sort(), [...kept, 'fleet-2026-12-01.tar.gz'].sort())
    assert.deepEqual((await readdir(pkiDir)).sort(), ['ca-bundle.pem', 'ca.key', 'ca.pem', 'server.key', 'server.pem'])
  })

  for (const when of ['while the rows are written', 'while the archive is written'] as const) {
    it(`an abort (Ctrl-C, SIGTERM) ${when}: rejects with its reason and leaves nothing beside --out`, async () => {
      const controller = new AbortController()
      const interrupted = new FleetkitError('COMMAND_INTERRUPTED', 'stopped by SIGINT', { data: { signal: 'SIGINT' } })
      const error = await backupState({
        pool: db().pool,
        pkiDir,
        out: join(out, 'b.tar.gz'),
        now,
        signal: controller.signal,
        open: async (path, flags, mode) => {
          if (path.endsWith(when === 'while the rows are written' ? '.jsonl' : '.tmp')) controller.abort(interrupted)
          return open(path, flags, mode)
        },
      }).then(
        (result) => assert.fail(`the interrupted backup was written: ${JSON.stringify(result)}`),
        (e: unknown) => toFleetkitError(e),
      )
      assert.equal(error, interrupted)
      assert.deepEqual(await readdir(out), [], 'no backup, no staged archive, no row directory')
    })
  }

  it('an abort while waiting for the PKI lock ends the wait at once and leaves nothing beside --out', async () => {
    const controller = new AbortController()
    const interrupted = new FleetkitError('COMMAND_INTERRUPTED', 'stopped by SIGINT', { data: { signal: 'SIGINT' } })
    let release!: () => void
    let held!: () => void
    const holding = new Promise<void>((resolve) => (held = resolve))
    // Another command (a `ca rotate`) holds the PKI lock until the backup has given up.
    const rotation = withPkiLock(pkiDir, async () => {
      held()
      await new Promise<void>((resolve) => (release = resolve))
    })
    await holding
    setTimeout(() => controller.abort(interrupted), 200)
    const error = await backupState({
      pool: db().pool,
      pkiDir,
      out: join(out, 'b.tar.gz'),
      now,
      signal: controller.signal,
    }).then(
      (result) => assert.fail(`the interrupted backup was written: ${JSON.stringify(result)}`),
      (e: unknown) => toFleetkitError(e),
    )
    // Without the signal the backup sat out the PKI lock's 30 s and then said PKI_BUSY.
    assert.equal(error, interrupted)
    assert.deepEqual(await readdir(out), [], 'no backup, no staged archive, no row directory')
    release()
    await rotation
  })

  it('holds the PKI lock from the snapshot until the PKI is read: a rotation cannot slip in between', async () => {
    let probed: string | undefined
    const result = await backupState({
      pool: db().pool,
      pkiDir,
      out: join(out, 'b.tar.gz'),
      now,
      open: async (path, flags, mode) => {
        // The first row file: the snapshot is being read. A `ca rotate` would take the PKI lock now.
        probed ??= await withPkiLock(pkiDir, async () => 'taken', { timeoutMs: 200 }).then(
          (taken) => taken,
          (error: unknown) => toFleetkitError(error).code,
        )
        return open(path, flags, mode)
      },
    })
    assert.equal(probed, 'PKI_BUSY', 'the PKI lock was free while the database snapshot was read')
    assert.deepEqual(result.pkiFiles, ['ca-bundle.pem', 'ca.key', 'ca.pem', 'server.key', 'server.pem'])
  })
})
