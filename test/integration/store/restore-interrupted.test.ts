// `fleetkit db restore` killed after its database commit and before its PKI rename (strace -e
// inject=rename:signal=KILL) leaves the restored database, no PKI directory, the restored PKI staged in
// `<pki>.restore-<hex>/` (beside the lock-only `<pki>.restore-lock-<hex>/`) and the unpacked backup,
// CA key included, under the OS temp directory. The test leaves exactly that on disk, then checks what
// the gateway's PKI load says (never `ca init`) and that running the restore again converges and
// removes what the dead run left.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { restoreState } from '../../../src/lifecycle/state/db-restore.js'
import { systemClock } from '../../../src/config/clock.js'
import { rotateTicketKeys } from '../../../src/gateway/tls/ticket-keys.js'
import { rotateCa } from '../../../src/lifecycle/ca/ca-rotation.js'
import { readGatewayCaBundle } from '../../../src/lifecycle/seed/seed-files.js'
import { initPki } from '../../../src/pki/init-pki.js'
import { reissueServerCertificate } from '../../../src/pki/reissue-server-certificate.js'
import { loadPkiSet } from '../../../src/pki/pki-set.js'
import { appendEvent } from '../../../src/store/events.js'
import { runFleetkit } from '../../support/cli.js'
import {
  freshDatabase,
  startDisposablePostgres,
  type DisposablePostgres,
  type FreshDatabase,
} from '../../support/postgres.js'

describe('db restore killed between its commit and its PKI rename', function () {
  this.timeout(120_000)
  let pg: DisposablePostgres
  let dir: string
  let backup: string
  let backupCa: string
  const databases: FreshDatabase[] = []
  const savedTmpdir = process.env.TMPDIR

  before(async () => {
    pg = await startDisposablePostgres()
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-restore-killed-'))
    const source = await freshDatabase(pg.url)
    databases.push(source)
    const pkiDir = join(dir, 'source-pki')
    await initPki({ pkiDir, serverNames: ['localhost'], now: new Date() })
    backupCa = await readFile(join(pkiDir, 'ca.pem'), 'utf8')
    await appendEvent(source.pool, { kind: 'operator_note', data: { note: 'in the backup' } })
    backup = join(dir, 'state.tar.gz')
    const done = await runFleetkit(['db', 'backup', '--out', backup, '--pki-dir', pkiDir, '--json'], {
      env: { DATABASE_URL: source.url },
    })
    assert.equal(done.code, 0, done.stdout + done.stderr)
    // The restores unpack here, so the test sees (and plants) their temp directories.
    await mkdir(join(dir, 'tmp'))
    process.env.TMPDIR = join(dir, 'tmp')
  })
  after(async () => {
    if (savedTmpdir === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = savedTmpdir
    for (const db of databases) await db.drop().catch(() => undefined)
    await pg?.stop()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('the PKI load names the staged PKI, not ca init; the restore run again puts the PKI in place and removes the leftovers', async () => {
    const db = await freshDatabase(pg.url)
    databases.push(db)
    const pkiDir = join(dir, 'pki')
    const restore = (force: boolean) =>
      restoreState({ withPool: (work) => work(db.pool), file: backup, pkiDir, force, actor: 'test', now: new Date() })
    await restore(false)
    // What the kill at the first rename leaves: the database restored, the PKI staged, the lock-only directory
    // renamed aside, no pki/, and the unpacked backup of a process that is gone.
    const staged = `${pkiDir}.restore-0123456789ab`
    const lockOnly = `${pkiDir}.restore-lock-ba9876543210`
    await rename(pkiDir, staged)
    await mkdir(lockOnly, { mode: 0o700 })
    await writeFile(join(lockOnly, '.pki.lock'), '999999\n')
    const deadPid = spawnSync('true').pid
    const deadWork = join(dir, 'tmp', `fleetkit-restore-${deadPid}-AbC123`)
    await mkdir(join(deadWork, 'pki'), { recursive: true })
    await writeFile(join(deadWork, 'pki', 'ca.key'), 'key')
    // A live process's unpacked backup (PID 1 always runs) and an unrelated name stay.
    const liveWork = join(dir, 'tmp', 'fleetkit-restore-1-XyZ789')
    const unrelated = join(dir, 'tmp', 'fleetkit-restore-Qw1234')
    await mkdir(liveWork)
    await mkdir(unrelated)

    const missing = await loadPkiSet(pkiDir, new Date()).then(
      () => assert.fail('the PKI loaded without a pki/ directory'),
      (error: unknown) => error,
    )
    assert.ok(missing instanceof FleetkitError && missing.code === 'CA_MISSING', String(missing))
    assert.ok(!missing.actions.some((a) => a.includes('ca init')), missing.actions.join('\n'))
    assert.match(
      missing.message,
      /pki\.restore-0123456789ab beside it holds the PKI of a db restore that did not finish/,
    )
    assert.ok(missing.actions[0]!.startsWith('fleetkit db restore BACKUP --force'))

    // The same restore again is refused (its database is restored), and removes the dead run's staging.
    await assert.rejects(
      restore(false),
      (error: unknown) => (error as FleetkitError).code === 'RESTORE_TARGET_NOT_EMPTY',
    )
    assert.ok(!existsSync(staged) && !existsSync(lockOnly), 'the staged PKI of the dead run is removed')
    const forced = await restore(true)
    assert.equal(forced.pki.keptAside, null)
    assert.equal(await readFile(join(pkiDir, 'ca.pem'), 'utf8'), backupCa)
    assert.deepEqual((await readdir(dir)).filter((name) => name.startsWith('pki')).sort(), ['pki'])
    assert.deepEqual((await readdir(join(dir, 'tmp'))).sort(), ['fleetkit-restore-1-XyZ789', 'fleetkit-restore-Qw1234'])
  })

  it('a --force restore killed after keeping the old PKI aside: CA_MISSING names the kept-aside directory', async () => {
    const pkiDir = join(dir, 'forced-pki')
    await mkdir(`${pkiDir}.before-restore-20260101T000000000Z`, { mode: 0o700 })
    const missing = await loadPkiSet(pkiDir, new Date()).then(
      () => assert.fail('loaded'),
      (error: unknown) => error as FleetkitError,
    )
    assert.equal(missing.code, 'CA_MISSING')
    assert.match(missing.message, /forced-pki\.before-restore-20260101T000000000Z beside it/)
    assert.ok(!missing.actions.some((a) => a.includes('ca init')))
  })

  it('every command that finds no CA gives the same advice: the restore again, never ca init', async () => {
    const pkiDir = join(dir, 'every-pki')
    await mkdir(`${pkiDir}.restore-0123456789ab`, { mode: 0o700 })
    const db = await freshDatabase(pg.url)
    databases.push(db)
    const commands: [string, () => Promise<unknown>][] = [
      ['the gateway (loadPkiSet)', () => loadPkiSet(pkiDir, new Date())],
      ['ca server-cert', () => reissueServerCertificate({ pkiDir, serverNames: ['localhost'], now: new Date() })],
      ['ca rotate --begin', () => rotateCa({ pool: db.pool, phase: 'begin', pkiDir, clock: systemClock })],
      ['ca rotate --status', () => rotateCa({ pool: db.pool, phase: 'status', pkiDir, clock: systemClock })],
      ['gateway rotate-ticket-keys', () => rotateTicketKeys(pkiDir)],
      ['seed (the CA bundle)', () => readGatewayCaBundle({ FLEETKIT_PKI_DIR: pkiDir })],
    ]
    for (const [what, run] of commands) {
      const missing = await run().then(
        () => assert.fail(`${what} ran without a PKI directory`),
        (error: unknown) => error as FleetkitError,
      )
      assert.equal(missing.code, 'CA_MISSING', `${what}: ${String(missing)}`)
      assert.ok(!missing.actions.some((a) => a.includes('ca init')), `${what}: ${missing.actions.join(' / ')}`)
      assert.ok(missing.actions[0]!.startsWith('fleetkit db restore BACKUP --force'), what)
      // Said once: the advice is not added again by a caller.
      assert.equal(missing.message.split(' beside it holds the PKI of a db restore').length, 2, missing.message)
      assert.deepEqual(missing.data?.leftovers, [`${pkiDir}.restore-0123456789ab`], what)
    }
  })
})
