// The restore drill (issue 24): a gateway with an enrolled agent heartbeating; `fleetkit db backup`;
// the state destroyed (the database dropped, the PKI directory removed); `fleetkit db restore` into
// a new database and PKI directory; a gateway on them: the same agent heartbeats with its
// certificate, the events and the sync ledger are back, and a secret issued after the backup is
// refused. And what restore refuses before it changes anything.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

import { appendEvent, listEvents } from '../../../src/store/events.js'
import { createSyncRun, finishSyncRun, getSyncRun } from '../../../src/store/sync/sync-ledger.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { startTestGateway, type TestGateway } from '../../support/gateway.js'
import { makeCsr, nodeKey } from '../../support/pki.js'
import {
  freshDatabase,
  startDisposablePostgres,
  type DisposablePostgres,
  type FreshDatabase,
} from '../../support/postgres.js'
import { TEST_HOST_FACTS } from '../../support/host-facts.js'

const execFileAsync = promisify(execFile)

/**
 * A copy of a backup with each table's member passed through `edit` and the manifest's checksums made to
 * match: what a careful hand (or a hostile one) makes, which the file's own checks cannot tell from a real one.
 */
async function editedBackup(
  file: string,
  work: string,
  edit: (table: string, text: string) => string,
): Promise<string> {
  await mkdir(work, { recursive: true })
  await execFileAsync('tar', ['-xzf', file, '-C', work])
  const members = (await execFileAsync('tar', ['-tzf', file])).stdout.split('\n').filter((m) => m !== '')
  const manifest = JSON.parse(await readFile(join(work, 'manifest.json'), 'utf8')) as {
    tables: { name: string; member: string; sha256: string }[]
  }
  for (const table of manifest.tables) {
    const text = edit(table.name, await readFile(join(work, table.member), 'utf8'))
    await writeFile(join(work, table.member), text)
    table.sha256 = createHash('sha256').update(text).digest('hex')
  }
  await writeFile(join(work, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  const out = `${work}.tar.gz`
  await execFileAsync('tar', ['--format=ustar', '-czf', out, '-C', work, ...members])
  return out
}

const FACTS = TEST_HOST_FACTS

describe('db backup and restore: the drill', function () {
  this.timeout(240_000)
  let pg: DisposablePostgres
  let dir: string
  const gateways: TestGateway[] = []
  const databases: FreshDatabase[] = []
  before(async () => {
    pg = await startDisposablePostgres()
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-restore-drill-'))
  })
  after(async () => {
    for (const gw of gateways) await gw.close().catch(() => undefined)
    for (const db of databases) await db.drop().catch(() => undefined)
    await pg?.stop()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('an enrolled agent keeps working after backup, destruction and restore; events and the ledger are back; a later secret is refused', async () => {
    const gw = await startTestGateway({ postgresUrl: pg.url, sweep: null })
    gateways.push(gw)
    await gw.declareNode('drill-1')
    const agent = await gw.enroll('drill-1', await gw.issueSecret('drill-1'))
    assert.equal((await gw.agent(agent, 'POST', '/v1/agent/heartbeat', { facts: FACTS })).status, 200)
    await gw.flushHeartbeats()
    await appendEvent(gw.db.pool, { kind: 'operator_note', nodeId: 'drill-1', data: { note: 'before the backup' } })
    const run = await createSyncRun(gw.db.pool, {
      kind: 'sync',
      revision: 'a'.repeat(40),
      definitionSha256: 'd'.repeat(64),
      planHash: 'e'.repeat(64),
      plan: {},
      startedBy: 'drill',
      pid: 1,
      nodes: [{ nodeId: 'drill-1', phase: 'canary', state: 'pending' }],
    })
    await finishSyncRun(gw.db.pool, run.id, 'converged')
    const eventsBefore = await listEvents(gw.db.pool)

    const file = join(dir, 'state.tar.gz')
    const backup = await runFleetkit(['db', 'backup', '--out', file, '--pki-dir', gw.pkiDir, '--json'], {
      env: { DATABASE_URL: gw.db.url },
    })
    assert.equal(backup.code, 0, backup.stdout + backup.stderr)
    assertMatchesOutputSchema('db-backup', backup.json)
    assert.equal((await stat(file)).mode & 0o777, 0o600)
    assert.ok(backup.json.result.pkiFiles.includes('ca.key'))
    assert.doesNotMatch(backup.stdout + backup.stderr, /PRIVATE KEY/)
    const again = await runFleetkit(['db', 'backup', '--out', file, '--pki-dir', gw.pkiDir, '--json'], {
      env: { DATABASE_URL: gw.db.url },
    })
    assert.equal(again.json.code, 'BACKUP_OUTPUT_EXISTS', 'never over an existing file')

    // After the backup: a secret the restore will not know.
    await gw.declareNode('late-1')
    const lateSecret = await gw.issueSecret('late-1')

    // Destroy the state: the gateway stops, its database is dropped and its PKI directory removed.
    gateways.pop()
    await gw.close()
    assert.equal(existsSync(gw.pkiDir), false)

    const db = await freshDatabase(pg.url)
    databases.push(db)
    const pkiDir = join(dir, 'restored-pki')
    const restore = await runFleetkit(['db', 'restore', file, '--pki-dir', pkiDir, '--json'], {
      env: { DATABASE_URL: db.url },
    })
    assert.equal(restore.code, 0, restore.stdout + restore.stderr)
    assertMatchesOutputSchema('db-restore', restore.json)
    assert.equal(restore.json.result.pki.restored, true)
    assert.equal((await stat(join(pkiDir, 'ca.key'))).mode & 0o777, 0o600)

    const restored = await startTestGateway({
      postgresUrl: pg.url,
      sweep: null,
      shared: { pkiDir, db } as unknown as TestGateway,
    })
    gateways.push(restored)
    const beat = await restored.agent(agent, 'POST', '/v1/agent/heartbeat', { facts: FACTS })
    assert.equal(beat.status, 200, `the same agent, its certificate: ${JSON.stringify(beat.body)}`)
    const eventsAfter = (await listEvents(db.pool)).filter((e) => e.kind !== 'state_restored')
    assert.deepEqual(
      eventsAfter.slice(0, eventsBefore.length).map((e) => [e.id, e.kind, e.nodeId]),
      eventsBefore.map((e) => [e.id, e.kind, e.nodeId]),
      'the events, ids included',
    )
    assert.equal((await getSyncRun(db.pool, run.id))?.outcome, 'converged', 'the sync ledger')
    assert.ok((await listEvents(db.pool, { kind: 'state_restored' })).length === 1)
    // New rows continue after the restored ones (sequences restored).
    const next = await appendEvent(db.pool, { kind: 'operator_note', data: { note: 'after' } })
    assert.ok(next.id > eventsBefore.at(-1)!.id)

    const csr = await makeCsr(await nodeKey(), { name: 'CN=late-1' })
    const late = await restored.enrollPost({ node_id: 'late-1', enrollment_secret: lateSecret, csr_pem: csr })
    assert.notEqual(late.status, 200, 'a secret issued after the backup is unknown to the restored state')
    assert.ok(late.status >= 400 && late.status < 500, `${late.status} ${JSON.stringify(late.body)}`)
  })

  it('refuses a damaged file, a target with state, and changes nothing', async () => {
    const gw = await startTestGateway({ postgresUrl: pg.url, sweep: null })
    gateways.push(gw)
    await gw.declareNode('keep-1')
    const file = join(dir, 'second.tar.gz')
    const env = { DATABASE_URL: gw.db.url }
    assert.equal((await runFleetkit(['db', 'backup', '--out', file, '--pki-dir', gw.pkiDir], { env })).code, 0)

    const notEmpty = await runFleetkit(['db', 'restore', file, '--pki-dir', gw.pkiDir, '--json'], { env })
    assert.equal(notEmpty.json.code, 'RESTORE_TARGET_NOT_EMPTY', notEmpty.stdout)
    assertMatchesOutputSchema('db-restore', notEmpty.json)
    // The next commands repeat the --pki-dir given: run as printed, they act on this PKI, not the default one.
    assert.ok(
      (notEmpty.json.actions as string[]).includes(`fleetkit db restore --pki-dir ${gw.pkiDir} ${file} --force`),
      notEmpty.stdout,
    )

    const damaged = join(dir, 'damaged.tar.gz')
    await copyFile(file, damaged)
    const bytes = await readFile(damaged)
    const middle = Math.floor(bytes.length / 2)
    bytes[middle] = bytes[middle]! ^ 0xff
    await writeFile(damaged, bytes)
    const db = await freshDatabase(pg.url)
    databases.push(db)
    const refused = await runFleetkit(['db', 'restore', damaged, '--pki-dir', join(dir, 'never'), '--json'], {
      env: { DATABASE_URL: db.url },
    })
    assert.equal(refused.json.code, 'BACKUP_INVALID', refused.stdout)
    assert.equal(existsSync(join(dir, 'never')), false, 'no PKI directory made')
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM nodes')
    assert.equal(rows[0].n, 0, 'nothing loaded')

    // Edited with care (the manifest's checksums written anew), so every check of the file passes: a row
    // PostgreSQL refuses (a NUL in a node id) is the backup's fault, BACKUP_INVALID, and nothing is loaded.
    const edited = await editedBackup(file, join(dir, 'edited'), (table, text) =>
      table === 'nodes' ? text.replace('"keep-1"', '"keep\\u0000-1"') : text,
    )
    const rowRefused = await runFleetkit(['db', 'restore', edited, '--pki-dir', join(dir, 'never'), '--json'], {
      env: { DATABASE_URL: db.url },
    })
    assert.equal(rowRefused.json.code, 'BACKUP_INVALID', rowRefused.stdout + rowRefused.stderr)
    assert.match(rowRefused.json.message, /SQLSTATE 22P05/)
    assert.equal((await db.pool.query('SELECT count(*)::int AS n FROM nodes')).rows[0].n, 0, 'nothing loaded')
    assert.equal(existsSync(join(dir, 'never')), false, 'no PKI directory made')

    // Into the embedded server of an empty state directory: every refusal the file or the PKI target
    // earns comes before the database is opened, so no server starts and no data directory is made.
    const emptyState = join(dir, 'empty-state')
    for (const [backup, pki, code] of [
      [damaged, join(dir, 'never'), 'BACKUP_INVALID'],
      [join(dir, 'no-such-backup.tar.gz'), join(dir, 'never'), 'BACKUP_INVALID'],
      [file, gw.pkiDir, 'RESTORE_TARGET_NOT_EMPTY'],
    ] as const) {
      const embedded = await runFleetkit(
        ['db', 'restore', backup, '--pki-dir', pki, '--state-dir', emptyState, '--json'],
        {
          env: { DATABASE_URL: undefined },
        },
      )
      assert.equal(embedded.json.code, code, embedded.stdout + embedded.stderr)
      assert.notEqual(embedded.code, 0)
      assert.equal(existsSync(emptyState), false, `${code}: the target state directory is left as it was (none)`)
      assert.equal(existsSync(join(dir, 'never')), false, 'no PKI directory made')
    }

    // A database no fleetkit ever touched: nothing to back up (a coded refusal), and a restore builds it.
    const empty = await freshDatabase(pg.url)
    databases.push(empty)
    await empty.pool.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public')
    const nothing = await runFleetkit(['db', 'backup', '--out', join(dir, 'none.tar.gz'), '--json'], {
      env: { DATABASE_URL: empty.url, FLEETKIT_PKI_DIR: join(dir, 'no-pki') },
    })
    assert.equal(nothing.json.code, 'BACKUP_INVALID', nothing.stdout)
    const built = await runFleetkit(['db', 'restore', file, '--pki-dir', join(dir, 'built-pki'), '--json'], {
      env: { DATABASE_URL: empty.url },
    })
    assert.equal(built.code, 0, built.stdout + built.stderr)
    const { rows: kept } = await empty.pool.query("SELECT id FROM nodes WHERE id = 'keep-1'")
    assert.equal(kept.length, 1)

    const forced = await runFleetkit(['db', 'restore', file, '--pki-dir', gw.pkiDir, '--force', '--json'], { env })
    assert.equal(forced.code, 0, forced.stdout + forced.stderr)
    assert.match(forced.json.result.pki.keptAside, /\.before-restore-/)
    assert.ok(existsSync(forced.json.result.pki.keptAside))
  })
})
