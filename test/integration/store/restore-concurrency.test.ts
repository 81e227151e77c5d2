// `fleetkit db restore` against what runs at the same time: another restore into the same target, a
// row written between the restore's first look and its transaction, a PKI command holding the PKI
// directory. Each race is made to happen, not hoped for: the test holds the lock the first restore
// stops at (the migration lock its transaction takes first, or the PKI lock) while the other side acts.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { restoreState } from '../../../src/lifecycle/state/db-restore.js'
import { initPki } from '../../../src/pki/init-pki.js'
import { withPkiLock } from '../../../src/pki/pki-lock.js'
import { appendEvent, listEvents } from '../../../src/store/events.js'
import { MIGRATION_LOCK_KEY } from '../../../src/store/migrate.js'
import { runFleetkit } from '../../support/cli.js'
import { eventually } from '../../support/eventually.js'
import {
  freshDatabase,
  startDisposablePostgres,
  type DisposablePostgres,
  type FreshDatabase,
} from '../../support/postgres.js'

describe('db restore against concurrent commands', function () {
  this.timeout(120_000)
  let pg: DisposablePostgres
  let dir: string
  let backup: string
  let backupCa: string
  const databases: FreshDatabase[] = []
  async function database(): Promise<FreshDatabase> {
    const db = await freshDatabase(pg.url)
    databases.push(db)
    return db
  }
  before(async () => {
    pg = await startDisposablePostgres()
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-restore-race-'))
    const source = await database()
    const pkiDir = join(dir, 'source-pki')
    await initPki({ pkiDir, serverNames: ['localhost'], now: new Date() })
    backupCa = await readFile(join(pkiDir, 'ca.pem'), 'utf8')
    await appendEvent(source.pool, { kind: 'operator_note', data: { note: 'in the backup' } })
    backup = join(dir, 'state.tar.gz')
    const done = await runFleetkit(['db', 'backup', '--out', backup, '--pki-dir', pkiDir, '--json'], {
      env: { DATABASE_URL: source.url },
    })
    assert.equal(done.code, 0, done.stdout + done.stderr)
  })
  after(async () => {
    for (const db of databases) await db.drop().catch(() => undefined)
    await pg?.stop()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  const restore = (db: FreshDatabase, pkiDir: string, options: { force?: boolean; pkiLockTimeoutMs?: number } = {}) =>
    restoreState({
      withPool: (work) => work(db.pool),
      file: backup,
      pkiDir,
      force: options.force ?? false,
      actor: 'test',
      now: new Date(),
      ...(options.pkiLockTimeoutMs === undefined ? {} : { pkiLockTimeoutMs: options.pkiLockTimeoutMs }),
    })

  /** Sessions of this database waiting for a lock (an advisory one, or a table's). */
  const waiting = async (db: FreshDatabase) =>
    (
      await db.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      )
    ).rows[0]!.n

  /** Holds the migration lock (the first thing a restore's transaction takes) until `release` is called. */
  async function holdMigrationLock(db: FreshDatabase) {
    const client = await db.pool.connect()
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY])
    return async () => {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY])
      client.release()
    }
  }

  const refusedNotEmpty = (error: unknown) =>
    error instanceof FleetkitError && error.code === 'RESTORE_TARGET_NOT_EMPTY'

  it("of two restores at once into one empty target, the second finds the first one's state and is refused", async () => {
    const db = await database()
    const pkiDir = join(dir, 'raced-pki')
    const release = await holdMigrationLock(db)
    // The first has judged the target empty and waits at the start of its transaction.
    const first = restore(db, pkiDir)
    await eventually('the first restore to wait in its transaction', async () => (await waiting(db)) >= 1, {
      intervalMs: 20,
    })
    // The second comes while the target is still empty; it must not judge it before the first is done.
    const second = restore(db, pkiDir)
    await eventually('the second restore to wait', async () => (await waiting(db)) >= 2, { intervalMs: 20 })
    await release()
    const [a, b] = await Promise.allSettled([first, second])
    assert.equal(a.status, 'fulfilled', a.status === 'rejected' ? String(a.reason) : '')
    assert.equal(a.value.pki.keptAside, null)
    assert.equal(b.status, 'rejected', 'the second restore replaced the first one without --force')
    assert.ok(refusedNotEmpty(b.reason), String(b.reason))
    // One restore's state: one event, its PKI in place, nothing renamed aside or left staged.
    assert.equal((await listEvents(db.pool, { kind: 'state_restored' })).length, 1)
    assert.equal(await readFile(join(pkiDir, 'ca.pem'), 'utf8'), backupCa)
    assert.deepEqual((await readdir(dir)).filter((name) => name.startsWith('raced-pki')).sort(), ['raced-pki'])
  })

  it('judges the rows again in its transaction: a row written after its first look refuses it, changing nothing', async () => {
    const db = await database()
    const pkiDir = join(dir, 'late-row-pki')
    const release = await holdMigrationLock(db)
    const restoring = restore(db, pkiDir)
    await eventually('the restore to wait in its transaction', async () => (await waiting(db)) >= 1, {
      intervalMs: 20,
    })
    // A gateway or command writing meanwhile: the target is no longer empty.
    await appendEvent(db.pool, { kind: 'operator_note', data: { note: 'written during the restore' } })
    await release()
    await assert.rejects(restoring, refusedNotEmpty)
    const events = await listEvents(db.pool)
    assert.deepEqual(
      events.map((e) => e.kind),
      ['operator_note'],
      'the row written meanwhile is kept and nothing restored',
    )
    assert.equal(existsSync(pkiDir), false, 'no PKI directory made')
    assert.deepEqual(
      (await readdir(dir)).filter((name) => name.startsWith('late-row-pki')),
      [],
    )
  })

  it('waits for a PKI command holding the PKI directory, and gives up with PKI_BUSY changing nothing', async () => {
    const db = await database()
    const pkiDir = join(dir, 'busy-pki')
    await initPki({ pkiDir, serverNames: ['localhost'], now: new Date() })
    const ca = await readFile(join(pkiDir, 'ca.pem'), 'utf8')
    // A `ca rotate --begin` (or a backup's copy of the PKI) holds the directory for the whole restore.
    await withPkiLock(pkiDir, async () => {
      await assert.rejects(
        restore(db, pkiDir, { force: true, pkiLockTimeoutMs: 200 }),
        (error: unknown) => error instanceof FleetkitError && error.code === 'PKI_BUSY',
      )
    })
    assert.equal(await readFile(join(pkiDir, 'ca.pem'), 'utf8'), ca, 'the PKI directory is the one there before')
    assert.deepEqual(await listEvents(db.pool), [], 'the database is as it was')
    assert.deepEqual(
      (await readdir(dir)).filter((name) => name.startsWith('busy-pki')),
      ['busy-pki'],
    )
  })
})
