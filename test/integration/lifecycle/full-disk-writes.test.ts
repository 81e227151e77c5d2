// A disk that fills while fleetkit writes its own files (the full-disk probe): every command fails
// with FILESYSTEM_WRITE_FAILED (exit 74) naming the file it was writing, and leaves nothing at a
// final path, no temp file, and what was there before as it was. The backup's short write (the
// kernel writes part of a buffer and says so only in bytesWritten) is injected, so it runs anywhere;
// the commands run for real on a full tmpfs (root, as CI runs).
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { closeSync, ftruncateSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { toFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { loadOrCreateTicketKeys, ticketKeysPath } from '../../../src/gateway/tls/ticket-keys.js'
import { backupState } from '../../../src/lifecycle/state/db-backup.js'
import { appendEvent } from '../../../src/store/events.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import {
  type DisposablePostgres,
  type FreshDatabase,
  freshDatabase,
  startDisposablePostgres,
} from '../../support/postgres.js'
import { runProcess } from '../../support/process.js'
import { smallDisk } from '../../support/small-disk.js'
import { fakeAgent } from '../release/release-cli.js'

/** Writes FILE until its filesystem has no byte left, then gives `free` bytes back (truncating frees tmpfs pages). */
function fillUp(file: string, free = 0): void {
  const fd = openSync(file, 'w')
  let size = 0
  try {
    for (let chunk = 1 << 20; chunk >= 512; chunk >>= 1) {
      const bytes = Buffer.alloc(chunk, 1)
      for (;;) {
        try {
          size += writeSync(fd, bytes)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break
          throw error
        }
      }
    }
    if (free > 0) ftruncateSync(fd, size - free)
  } finally {
    closeSync(fd)
  }
}

describe('a disk that fills while fleetkit writes its files: FILESYSTEM_WRITE_FAILED, nothing half-written', function () {
  this.timeout(180_000)
  let dir: string
  let server: DisposablePostgres
  let db: FreshDatabase
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-full-disk-'))
    server = await startDisposablePostgres()
    db = await freshDatabase(server.url)
    // Rows to write: the row files are the backup's first writes.
    for (let i = 0; i < 50; i++)
      await appendEvent(db.pool, { kind: 'operator_note', data: { note: `before the backup ${i}` } })
  })
  after(async () => {
    await db?.drop()
    await server?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  describe('db backup with a short write (injected)', () => {
    const now = new Date('2026-12-01T00:00:00Z')
    const backup = (out: string, disk?: ReturnType<typeof smallDisk>) =>
      backupState({ pool: db.pool, pkiDir: join(dir, 'no-pki'), out, now, ...(disk ? { open: disk.open } : {}) })

    it('a last write cut short fails the backup, naming the file; nothing is left beside --out', async () => {
      const whole = join(dir, 'whole')
      await mkdir(whole)
      const counted = smallDisk(Number.MAX_SAFE_INTEGER)
      await backup(join(whole, 'b.tar.gz'), counted)
      // All but the last few bytes fit: the archive's last write is short and nothing after it writes. A few, not
      // one: the snapshot's instant (the database's clock) is in the archive, so two backups of the same rows can
      // differ in size by a byte or two, and one that came out smaller would fit a room of all but one byte.
      const out = join(dir, 'short')
      await mkdir(out)
      const error = await backup(join(out, 'b.tar.gz'), smallDisk(counted.written - 16)).then(
        (result) => assert.fail(`a truncated backup was reported written: ${JSON.stringify(result)}`),
        (e: unknown) => toFleetkitError(e),
      )
      assert.equal(error.code, 'FILESYSTEM_WRITE_FAILED', error.message)
      assert.equal(error.exitCode, 74)
      assert.match(String(error.data?.path), new RegExp(`^${out}/\\.b\\.tar\\.gz\\.[^/]+\\.[0-9a-f]{12}\\.tmp$`))
      assert.match(error.message, new RegExp(`could not write ${out}/`))
      assert.deepEqual(await readdir(out), [], 'no backup, no temp file, no row directory')
    })

    it('a disk full while the rows are written fails the same way and removes the row files', async () => {
      const out = join(dir, 'rows')
      await mkdir(out)
      const error = await backup(join(out, 'b.tar.gz'), smallDisk(100)).then(
        () => assert.fail('the backup succeeded on a full disk'),
        (e: unknown) => toFleetkitError(e),
      )
      assert.equal(error.code, 'FILESYSTEM_WRITE_FAILED', error.message)
      assert.match(String(error.data?.path), /\/\.b\.tar\.gz\.[^/]+\/[a-z_]+\.jsonl$/)
      assert.deepEqual(await readdir(out), [])
    })
  })

  describe('the commands on a full tmpfs (root)', () => {
    let mount: string
    let mounted = false
    let env: NodeJS.ProcessEnv
    const filler = () => join(mount, 'filler')
    const onDisk = () => readdirSync(mount).filter((name) => name !== 'filler')
    before(async () => {
      mount = join(dir, 'tmpfs')
      await mkdir(mount)
      const made = await runProcess('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0700', 'tmpfs', mount])
      if (made.code !== 0)
        throw new Error(`mount tmpfs exited ${made.code}: these tests run as root (${made.stderr.trim()})`)
      mounted = true
      env = { DATABASE_URL: db.url, FLEETKIT_STATE_DIR: join(dir, 'state') }
    })
    afterEach(() => {
      rmSync(filler(), { force: true })
    })
    after(async () => {
      if (mounted) await runProcess('umount', [mount])
    })

    it('db backup --json: the coded error, not a crash; no temp directory left', async () => {
      fillUp(filler())
      const ran = await runFleetkit(
        ['db', 'backup', '--out', join(mount, 'b.tar.gz'), '--pki-dir', join(dir, 'no-pki'), '--json'],
        { env },
      )
      assert.equal(ran.code, 74, ran.stdout + ran.stderr)
      assertMatchesOutputSchema('db-backup', ran.json)
      assert.equal(ran.json.code, 'FILESYSTEM_WRITE_FAILED')
      assert.ok(String(ran.json.data.path).startsWith(`${mount}/`), ran.json.data.path)
      assert.deepEqual(onDisk(), [])
    })

    it('db restore with TMPDIR full: names TMPDIR and the file, never calls the backup damaged', async () => {
      const file = join(dir, 'good.tar.gz')
      const made = await runFleetkit(['db', 'backup', '--out', file, '--pki-dir', join(dir, 'no-pki')], { env })
      assert.equal(made.code, 0, made.stdout + made.stderr)
      fillUp(filler())
      const target = { DATABASE_URL: (await freshDatabase(server.url)).url, TMPDIR: mount }
      const ran = await runFleetkit(['db', 'restore', file, '--pki-dir', join(dir, 'restored-pki'), '--json'], {
        env: { ...env, ...target },
      })
      assert.equal(ran.code, 74, ran.stdout + ran.stderr)
      assert.equal(ran.json.code, 'FILESYSTEM_WRITE_FAILED')
      assert.ok(String(ran.json.data.path).startsWith(`${mount}/fleetkit-restore-`), ran.json.data.path)
      assert.match(ran.json.message, new RegExp(`into TMPDIR \\(${mount}\\): could not write ${mount}/`))
      // (tsx, which runs the source when there is no current build, keeps its cache in TMPDIR too.)
      assert.deepEqual(
        onDisk().filter((name) => !name.startsWith('tsx-')),
        [],
        'the unpacked files are removed',
      )
    })

    it('release pack over a signed release: the old archives, sums and signature stay as they were', async () => {
      const release = join(mount, 'rel')
      await fakeAgent(join(dir, 'dist-old'), 'amd64', '0.2.0')
      const first = await runFleetkit(
        ['release', 'pack', '--version', '0.2.0', '--input', join(dir, 'dist-old'), '--output', release],
        { env },
      )
      assert.equal(first.code, 0, first.stdout + first.stderr)
      await writeFile(join(release, 'SHA256SUMS.sig'), 'c2lnbmVk\n')
      const before = Object.fromEntries(readdirSync(release).map((n) => [n, readFileSync(join(release, n), 'hex')]))
      // A larger agent (random bytes do not compress): it cannot fit.
      const agent = await fakeAgent(join(dir, 'dist-new'), 'amd64', '0.2.0')
      await writeFile(agent, randomBytes(64 * 1024))
      fillUp(filler(), 16 * 1024)
      const ran = await runFleetkit(
        ['release', 'pack', '--version', '0.2.0', '--input', join(dir, 'dist-new'), '--output', release, '--json'],
        { env },
      )
      assert.equal(ran.code, 74, ran.stdout + ran.stderr)
      assert.equal(ran.json.code, 'FILESYSTEM_WRITE_FAILED')
      assert.equal(ran.json.data.path, join(release, 'fleetkit-agent-0.2.0-linux-amd64.tar.zst'))
      const after = Object.fromEntries(readdirSync(release).map((n) => [n, readFileSync(join(release, n), 'hex')]))
      assert.deepEqual(after, before, 'every file as it was, no temp file')
    })

    it('ca operator-cert: no key beside an empty certificate, nothing recorded', async () => {
      const pkiDir = join(dir, 'pki')
      const ca = await runFleetkit(['ca', 'init', '--pki-dir', pkiDir, '--json'], { env })
      assert.equal(ca.code, 0, ca.stdout + ca.stderr)
      const out = join(mount, 'ops')
      // One page: the key fits, its certificate does not.
      fillUp(filler(), 4096)
      const ran = await runFleetkit(['ca', 'operator-cert', 'opy', '--out', out, '--pki-dir', pkiDir, '--json'], {
        env,
      })
      assert.equal(ran.code, 74, ran.stdout + ran.stderr)
      assert.equal(ran.json.code, 'FILESYSTEM_WRITE_FAILED')
      assert.ok(String(ran.json.data.path).startsWith(`${out}/`), ran.json.data.path)
      assert.deepEqual(readdirSync(out), [])
      assert.equal((await db.pool.query("SELECT 1 FROM operator_certificates WHERE name = 'opy'")).rowCount, 0)
    })

    it('gateway rotate-ticket-keys: the keys as they were, no temp file in the PKI directory', async () => {
      const pkiDir = join(mount, 'pki')
      const ca = await runFleetkit(['ca', 'init', '--pki-dir', pkiDir, '--json'], { env })
      assert.equal(ca.code, 0, ca.stdout + ca.stderr)
      const first = await runFleetkit(['gateway', 'rotate-ticket-keys', '--pki-dir', pkiDir, '--json'], { env })
      assert.equal(first.code, 0, first.stdout + first.stderr)
      const before = Object.fromEntries(readdirSync(pkiDir).map((n) => [n, readFileSync(join(pkiDir, n), 'hex')]))
      fillUp(filler())
      const ran = await runFleetkit(['gateway', 'rotate-ticket-keys', '--pki-dir', pkiDir, '--json'], { env })
      assert.equal(ran.code, 74, ran.stdout + ran.stderr)
      assert.equal(ran.json.code, 'FILESYSTEM_WRITE_FAILED')
      assert.equal(ran.json.data.path, join(pkiDir, 'tls-ticket-keys'))
      const after = Object.fromEntries(readdirSync(pkiDir).map((n) => [n, readFileSync(join(pkiDir, n), 'hex')]))
      assert.deepEqual(after, before)
    })

    it("a gateway's first start: no ticket keys file, short or otherwise; whole ones once there is room", async () => {
      const pkiDir = join(mount, 'pki-first-start')
      await mkdir(pkiDir, { mode: 0o700 })
      fillUp(filler())
      const failed: unknown = await loadOrCreateTicketKeys(pkiDir).then(
        () => undefined,
        (error: unknown) => error,
      )
      // Nothing at the name (a short file there is what the next start would have to judge) and no temp file.
      assert.deepEqual(readdirSync(pkiDir), [])
      const coded = toFleetkitError(failed)
      assert.equal(coded.code, 'FILESYSTEM_WRITE_FAILED', coded.message)
      assert.equal(coded.data?.path, ticketKeysPath(pkiDir))
      rmSync(filler())
      const keys = await loadOrCreateTicketKeys(pkiDir)
      assert.equal(keys.length, 48)
      assert.deepEqual(readFileSync(ticketKeysPath(pkiDir)), keys)
      assert.deepEqual(readdirSync(pkiDir), ['tls-ticket-keys'])
    })
  })
})
