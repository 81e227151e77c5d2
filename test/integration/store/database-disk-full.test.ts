// PostgreSQL's disk fills up (real PostgreSQL with its data directory on a small tmpfs, filled to the
// last byte): the CLI fails with STATE_DISK_FULL (exit 74) and stores nothing, never INTERNAL_ERROR; the
// gateway answers an enrollment 503 STATE_UNAVAILABLE with Retry-After, never a 500; both work again
// once space is freed, with no restart. A statement that must grow a table (its first row) is what
// fails: PostgreSQL writes into the pages and WAL segment it already has as long as they last. And the embedded
// server's first start on a disk too small for initdb: STATE_DISK_FULL with initdb's reason, no directory left.
import assert from 'node:assert/strict'
import {
  chmodSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { startTestGateway, type TestGateway } from '../../support/gateway.js'
import { makeCsr, nodeKey } from '../../support/pki.js'
import {
  type DisposablePostgres,
  type FreshDatabase,
  freshDatabase,
  startDisposablePostgres,
} from '../../support/postgres.js'
import { runProcess, runProcessOk } from '../../support/process.js'

/** Writes FILE until the filesystem has no byte left (ENOSPC), in shrinking chunks. */
function fillUp(file: string): void {
  const fd = openSync(file, 'w')
  try {
    for (let chunk = 1 << 20; chunk >= 512; chunk >>= 1) {
      const bytes = Buffer.alloc(chunk, 1)
      for (;;) {
        try {
          writeSync(fd, bytes)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break
          throw error
        }
      }
    }
  } finally {
    closeSync(fd)
  }
}

describe('a full database disk: coded errors, never a 500 or INTERNAL_ERROR (real PostgreSQL on a full tmpfs)', function () {
  this.timeout(180_000)
  let dir: string
  let mount: string
  let mounted = false
  let server: DisposablePostgres | undefined
  let gw: TestGateway | undefined
  let cliDb: FreshDatabase | undefined
  const filler = () => join(mount, 'filler')

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleetkit-disk-full-'))
    // The server runs as the postgres user: it must be able to enter the directories above its data.
    chmodSync(dir, 0o755)
    mount = join(dir, 'pg')
    mkdirSync(mount)
    await runProcessOk('mount', ['-t', 'tmpfs', '-o', 'size=160m,mode=0755', 'tmpfs', mount])
    mounted = true
    server = await startDisposablePostgres({ dir: mount })
    // The CLI's own database: empty tables, so its first write must grow one.
    cliDb = await freshDatabase(server.url)
  })
  after(async () => {
    // The server may be restarting (a full disk can stop it when it needs a new WAL segment): clean up regardless.
    rmSync(filler(), { force: true })
    await gw?.close().catch(() => undefined)
    await cliDb?.drop().catch(() => undefined)
    await server?.stop()
    if (mounted) await runProcess('umount', [mount])
    rmSync(dir, { recursive: true, force: true })
  })

  it('the CLI fails with STATE_DISK_FULL (exit 74); no secret was printed or stored; the same command works once space is freed', async () => {
    const env = { DATABASE_URL: cliDb!.url, FLEETKIT_STATE_DIR: join(dir, 'state') }
    const args = ['node', 'token', 'build-1', '--definition', 'examples/fleet.yaml']
    fillUp(filler())
    const full = await runFleetkit(args, { env })
    assert.equal(full.code, 74, full.stdout + full.stderr)
    assert.match(
      full.stderr,
      /^Error \(STATE_DISK_FULL\): PostgreSQL could not write: its disk is full \(SQLSTATE 53100 disk_full\); the change was not made$/m,
    )
    assert.match(full.stderr, /free space on the filesystem of the PostgreSQL data directory/)
    // node token prints a secret only once its hash is stored: this one was neither.
    assert.equal(full.stdout, '', 'no secret was printed')
    const { rows } = await cliDb!.pool.query("SELECT count(*)::int AS n FROM nodes WHERE id = 'build-1'")
    assert.equal(rows[0].n, 0, 'nothing was stored')

    rmSync(filler())
    const freed = await runFleetkit([...args, '--json'], { env })
    assert.equal(freed.code, 0, freed.stdout + freed.stderr)
    assertMatchesOutputSchema('node-token', freed.json)
    assert.equal(typeof freed.json.result.secret, 'string')
  })

  it('the gateway answers an enrollment 503 with Retry-After while the disk is full, and enrolls the node once space is freed', async () => {
    gw = await startTestGateway({ postgresUrl: server!.url })
    await gw.declareNode('node-1')
    const secret = await gw.issueSecret('node-1')
    const csr = await makeCsr(await nodeKey(), { name: 'CN=node-1' })
    fillUp(filler())
    const refused = await gw.enrollPost({ node_id: 'node-1', enrollment_secret: secret, csr_pem: csr })
    assert.equal(refused.status, 503, JSON.stringify(refused.body))
    const error = (refused.body as { error: { code: string; message: string } }).error
    assert.equal(error.code, 'state_unavailable')
    assert.match(error.message, /the gateway's database failed the statement \(SQLSTATE 53100 disk_full\)/)
    assert.equal(refused.headers['retry-after'], '5')
    const { rows } = await gw.db.pool.query("SELECT count(*)::int AS n FROM node_certificates WHERE node_id = 'node-1'")
    assert.equal(rows[0].n, 0, 'no certificate row was kept')

    rmSync(filler())
    const enrolled = await gw.enrollPost({ node_id: 'node-1', enrollment_secret: secret, csr_pem: csr })
    assert.equal(enrolled.status, 200, JSON.stringify(enrolled.body))
  })
})

describe("the embedded server's first start on a full disk: STATE_DISK_FULL, nothing half-made (real initdb on a small tmpfs)", function () {
  this.timeout(180_000)
  let dir: string
  let mounted = false
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleetkit-initdb-full-'))
    // As root the server runs as the postgres user: it must be able to enter the directories above its data.
    chmodSync(dir, 0o755)
    // 2 MiB: the state directory's own files fit, initdb's first WAL segment (16 MiB) does not.
    await runProcessOk('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0755', 'tmpfs', dir])
    mounted = true
  })
  after(async () => {
    await runFleetkit(['db', 'stop'], { env: { FLEETKIT_STATE_DIR: join(dir, 'state') } }).catch(() => undefined)
    if (mounted) await runProcess('umount', [dir])
    rmSync(dir, { recursive: true, force: true })
  })

  it("says the disk is full with initdb's own reason, leaves no data directory, and starts once there is space", async () => {
    const env = { FLEETKIT_STATE_DIR: join(dir, 'state') }
    const full = await runFleetkit(['node', 'list', '--json'], { env })
    assert.equal(full.code, 74, full.stdout + full.stderr)
    assert.equal(full.json.code, 'STATE_DISK_FULL')
    assert.match(
      full.json.message,
      /^the embedded PostgreSQL data directory could not be created: the disk of .*\/state\/postgres is full \(FATAL: could not write to file ".*": No space left on device\); nothing was created$/,
    )
    assert.ok(
      full.json.actions.some((action: string) => /^free space on the filesystem of .*\/state\/postgres/.test(action)),
    )
    const left = readdirSync(join(dir, 'state', 'postgres')).filter((name) => name.startsWith('data'))
    assert.deepEqual(left, [], 'no data directory, whole or half-made')

    await runProcessOk('mount', ['-o', 'remount,size=200m', dir])
    const roomy = await runFleetkit(['node', 'list', '--json'], { env })
    assert.equal(roomy.code, 0, roomy.stdout + roomy.stderr)
  })

  it("a stopped server that cannot start on the full disk: STATE_DISK_FULL with its log's FATAL line; it starts once there is space", async () => {
    const env = { FLEETKIT_STATE_DIR: join(dir, 'state') }
    const stopped = await runFleetkit(['db', 'stop', '--json'], { env })
    assert.equal(stopped.code, 0, stopped.stdout + stopped.stderr)
    const filler = join(dir, 'filler')
    // The log keeps room for what the server says (as an operator's preallocated logs would); every other
    // page is taken but one, for fleetkit's own start lock: the server's postmaster.pid finds none.
    await runProcessOk('fallocate', ['--keep-size', '--length', '1M', join(dir, 'state', 'postgres', 'server.log')])
    fillUp(filler)
    truncateSync(filler, statSync(filler).size - 4096)
    const full = await runFleetkit(['node', 'list', '--json'], { env })
    assert.equal(full.code, 74, full.stdout + full.stderr)
    assert.equal(full.json.code, 'STATE_DISK_FULL', JSON.stringify(full.json))
    // The reason, not the log's last lines ("database system is shut down").
    assert.match(
      full.json.message,
      /^the embedded PostgreSQL could not start: the disk of .*\/state\/postgres is full \((FATAL|PANIC): .*No space left on device\)$/,
    )
    rmSync(filler)
    const freed = await runFleetkit(['node', 'list', '--json'], { env })
    assert.equal(freed.code, 0, freed.stdout + freed.stderr)
  })
})
