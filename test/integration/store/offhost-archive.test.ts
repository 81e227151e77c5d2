// The state survives the control host (issue 39, item 5): the embedded server's WAL archive shipped to a
// directory on another host over SFTP with its host key pinned, against a real OpenSSH sshd and a real
// embedded PostgreSQL: ship with checksums (sha256sum -c agrees), idempotent and resumed after a crash, a
// remote down (a coded error, local archiving unaffected), another host key refused, a tampered remote
// file found by verify, a restore from the remote copy reaching the newest segment, and the new-machine
// path: fetch into a fresh directory (the kit: password, PKI, published releases), restore --to latest into a
// fresh state directory; one directory holds one cluster's archive.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { Registry } from 'prom-client'

import { registerArchiveGauges } from '../../../src/gateway/metrics/archive-metrics.js'
import { enableArchiving } from '../../../src/lifecycle/state/db-archive.js'
import {
  addArchiveRemote,
  removeRemote,
  shipArchive,
  type ShipResult,
} from '../../../src/lifecycle/state/archive-ship.js'
import { verifyArchive } from '../../../src/lifecycle/state/archive-verify.js'
import { checkedArchiveRemote } from '../../../src/store/embedded/archive-remote.js'
import { claimRemoteForCluster } from '../../../src/lifecycle/state/remote-claim.js'
import type { RemoteArchiveFiles } from '../../../src/lifecycle/state/remote-files.js'
import { openDatabase, type Database } from '../../../src/store/database.js'
import { stopEmbeddedServer } from '../../../src/store/embedded/server.js'
import { appendEvent } from '../../../src/store/events.js'
import { readArchiverStatus, switchWal } from '../../../src/store/backup/wal-archive.js'
import { openSftpArchive } from '../../../src/sync/sftp-archive.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { eventually } from '../../support/eventually.js'
import { type OpenSshServer, startOpenSsh } from '../../support/openssh-server.js'
import { runProcess } from '../../support/process.js'
import { sshKeygen } from '../../support/ssh-server.js'

const RELEASE_VERSION = '1.2.3'
const RELEASE_FILES = ['SHA256SUMS', 'SHA256SUMS.sig', `fleetkit-agent-${RELEASE_VERSION}-linux-amd64.tar.zst`]
const hasCode = (code: string) => (error: unknown) => (error as { code?: string }).code === code
const cliEnv = { env: { DATABASE_URL: undefined, FLEETKIT_ACTOR: 'ci@offhost' } }

describe('the off-host WAL archive over SFTP (real sshd, real embedded PostgreSQL)', function () {
  this.timeout(300_000)
  let root: string
  let stateDir: string
  let archiveDir: string
  let remoteDir: string
  let sshd: OpenSshServer
  let url: string
  /** The old control host's gateway.env (the kit ships it) and where the new machine's fetch writes it. */
  let oldEnvFile: string
  let newEnvFile: string
  const BINDS = 'FLEETKIT_AGENT_BIND=10.0.0.5:8443\nFLEETKIT_ENROLL_BIND=10.0.0.5:8444\n'
  const quiet = { env: {}, now: () => new Date(), progress: () => undefined }
  const openRemote = (remote: Parameters<typeof openSftpArchive>[0]) => openSftpArchive(remote, {})

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleetkit-offhost-'))
    // The postgres user passes through (it runs the server and the archive_command).
    await chmod(root, 0o711)
    stateDir = join(root, 'state')
    archiveDir = join(root, 'archive')
    remoteDir = join(root, 'vault', 'fleetkit-archive')
    oldEnvFile = join(root, 'old-etc', 'gateway.env')
    newEnvFile = join(root, 'new-etc', 'fleetkit', 'gateway.env')
    const sshDir = join(root, 'sshd')
    await mkdir(sshDir, { mode: 0o700 })
    sshd = await startOpenSsh(sshDir)
    url = `ssh://${process.env.USER ?? 'root'}@127.0.0.1:${sshd.port}${remoteDir}`
  })
  after(async () => {
    await sshd?.stop()
    await stopEmbeddedServer(stateDir).catch(() => undefined)
    await stopEmbeddedServer(join(root, 'new-machine')).catch(() => undefined)
    await rm(root, { recursive: true, force: true })
  })

  const open = (dir = stateDir) =>
    openDatabase({ stateDir: dir, databaseUrl: '', max: 2, onIdleError: () => undefined })
  async function kinds(db: Database): Promise<string[]> {
    const { rows } = await db.pool.query<{ kind: string }>(
      `SELECT kind FROM events WHERE kind LIKE 'ship_%' ORDER BY id`,
    )
    return rows.map((r) => r.kind)
  }
  /** What remote add and remove recorded in the state, oldest first. */
  async function remoteEvents(): Promise<{ kind: string; data: Record<string, unknown> }[]> {
    const db = await open()
    try {
      const { rows } = await db.pool.query<{ kind: string; data: Record<string, unknown> }>(
        `SELECT kind, data FROM events WHERE kind LIKE 'archive_remote_%' ORDER BY id`,
      )
      return rows
    } finally {
      await db.close()
    }
  }
  /** A row, then its segment switched out and archived locally; returns the segment. */
  async function writeAndArchive(kind: string): Promise<string> {
    const db = await open()
    try {
      await appendEvent(db.pool, { kind })
      const wal = await switchWal(db.pool)
      await eventually('the segment to be archived locally', async () => {
        const status = await readArchiverStatus(db.pool)
        return status.lastArchivedWal !== null && status.lastArchivedWal >= wal
      })
      return wal
    } finally {
      await db.close()
    }
  }
  const ship = () => shipArchive({ ...quiet, stateDir, openRemote, gatewayEnvFile: oldEnvFile })
  /** `fleetkit db archive remote add` of the test's remote for the first state directory. */
  const remoteAddCli = () =>
    runFleetkit(
      [
        'db',
        'archive',
        'remote',
        'add',
        url,
        '--host-key',
        sshd.knownHostsLine,
        '--identity',
        sshd.clientKey.path,
        '--state-dir',
        stateDir,
        '--json',
      ],
      cliEnv,
    )
  const verify = (options: { remote: boolean; restore: boolean }) =>
    verifyArchive({ ...quiet, ...options, stateDir, openRemote })

  /** For a remote add refused before it changes anything: it never opens the state to record an event. */
  const unrecorded = { actor: 'ci@offhost', withPool: () => Promise.reject(new Error('the state is not opened')) }
  it('remote add refuses a host key other than the one the host presents, and records nothing', async () => {
    const db = await open()
    await enableArchiving({ ...quiet, pool: db.pool, stateDir, dir: archiveDir, archiveTimeoutSeconds: 60 }).finally(
      () => db.close(),
    )
    const other = await sshKeygen(join(root, 'sshd'), 'not_the_host_key')
    await assert.rejects(
      addArchiveRemote({
        ...quiet,
        stateDir,
        url,
        hostKeyLine: `[127.0.0.1]:${sshd.port} ${other.public}`,
        identityFile: sshd.clientKey.path,
        openRemote,
        ...unrecorded,
      }),
      hasCode('ARCHIVE_REMOTE_HOST_KEY_MISMATCH'),
    )
    assert.ok(!existsSync(join(stateDir, 'postgres', 'archive-remote.json')))
    assert.ok(!existsSync(remoteDir), 'nothing was made on the host')
    // The key of another host name is refused before anything is dialled.
    await assert.rejects(
      addArchiveRemote({
        ...quiet,
        stateDir,
        url,
        hostKeyLine: `vault.example.net ${sshd.hostKey.public}`,
        identityFile: sshd.clientKey.path,
        openRemote,
        ...unrecorded,
      }),
      hasCode('ARCHIVE_REMOTE_INVALID'),
    )
  })

  let firstShip: ShipResult
  it('remote add and ship: every finished segment and the base backup, each with a checksum sha256sum -c accepts', async () => {
    const add = await remoteAddCli()
    assert.equal(add.code, 0, add.stdout + add.stderr)
    assertMatchesOutputSchema('db-archive-remote-add', add.json)
    assert.equal(add.json.result.changed, true)
    assert.ok(!JSON.stringify(add.json).includes('PRIVATE KEY'), 'the identity is a path, never its contents')
    // Recorded as an event: who, the remote, its pinned key and the identity's path, never the key itself.
    const recorded = await remoteEvents()
    assert.deepEqual(recorded, [
      {
        kind: 'archive_remote_added',
        data: {
          actor: 'ci@offhost',
          url,
          host_key: add.json.result.hostKey,
          identity_file: sshd.clientKey.path,
          previous_url: null,
        },
      },
    ])
    assert.ok(!JSON.stringify(recorded).includes('PRIVATE KEY'))
    // The same remote again changes nothing and records nothing.
    const same = await remoteAddCli()
    assert.equal(same.json.result.changed, false, same.stdout + same.stderr)
    assert.equal((await remoteEvents()).length, 1)

    // A PKI directory's file rides along in the kit (the real PKI's round trip is the restore drill's).
    await mkdir(join(stateDir, 'pki'), { mode: 0o700 })
    await writeFile(join(stateDir, 'pki', 'ca.pem'), 'the CA certificate\n', { mode: 0o644 })
    // A published release rides along too (what `release publish` leaves; the gateway serves only these names),
    // but not a stray file beside it, nor a publish still in its dot-directory.
    const release = join(stateDir, 'releases', RELEASE_VERSION)
    await mkdir(release, { recursive: true })
    for (const name of RELEASE_FILES) await writeFile(join(release, name), `${name} of ${RELEASE_VERSION}\n`)
    await writeFile(join(release, 'notes.txt'), 'not a release file\n')
    await mkdir(join(stateDir, 'releases', '.publish-9.9.9-123'), { recursive: true })
    await writeFile(join(stateDir, 'releases', '.publish-9.9.9-123', 'SHA256SUMS'), 'half a publish\n')
    // The gateway unit's environment file rides along (its binds; the replacement writes it where the unit reads it).
    await mkdir(join(root, 'old-etc'))
    await writeFile(oldEnvFile, BINDS, { mode: 0o644 })
    const newest = await writeAndArchive('ship_first')
    const cli = await runFleetkit(
      ['db', 'archive', 'ship', '--state-dir', stateDir, '--gateway-env', oldEnvFile, '--json'],
      cliEnv,
    )
    assert.equal(cli.code, 0, cli.stdout + cli.stderr)
    assertMatchesOutputSchema('db-archive-ship', cli.json)
    firstShip = cli.json.result as ShipResult
    assert.ok(firstShip.lastShippedWal !== null && firstShip.lastShippedWal >= newest, JSON.stringify(firstShip))
    const localWal = (await readdir(join(archiveDir, 'wal'))).filter((n) => !n.endsWith('.part'))
    const remoteWal = await readdir(join(remoteDir, 'wal'))
    for (const name of localWal) {
      assert.ok(remoteWal.includes(name), `${name} shipped`)
      assert.ok(remoteWal.includes(`${name}.sha256`), `${name}.sha256 beside it`)
    }
    assert.ok(!remoteWal.some((n) => n.endsWith('.part')), 'no temporary file left')
    const base = await readdir(join(remoteDir, 'base'))
    assert.ok(base.some((n) => n.endsWith('.tar.gz.sha256')) && base.some((n) => n.endsWith('.json.sha256')))
    assert.ok(firstShip.shipped.includes('kit/password') && firstShip.shipped.includes('kit/pki/ca.pem'))
    assert.ok(firstShip.shipped.includes('kit/gateway.env'), JSON.stringify(firstShip.shipped))
    assert.equal(await readFile(join(remoteDir, 'kit', 'gateway.env'), 'utf8'), BINDS)
    assert.deepEqual(
      firstShip.shipped.filter((f) => f.startsWith('kit/releases/')).sort(),
      RELEASE_FILES.map((name) => `kit/releases/${RELEASE_VERSION}/${name}`).sort(),
    )
    assert.deepEqual(await readdir(join(remoteDir, 'kit', 'releases')), [RELEASE_VERSION])
    for (const sub of ['wal', 'base', 'kit', 'kit/pki', `kit/releases/${RELEASE_VERSION}`]) {
      const sums = (await readdir(join(remoteDir, sub))).filter((n) => n.endsWith('.sha256'))
      const check = await runProcess('sha256sum', ['-c', '--strict', ...sums], { cwd: join(remoteDir, sub) })
      assert.equal(check.code, 0, check.stdout + check.stderr)
    }
  })

  it('ship again sends nothing; after a crash between file and checksum it sends only that file again', async () => {
    const again = await ship()
    assert.deepEqual(again.shipped, [])
    // A kit file that changed (a CA rotation) goes again; the rest stays.
    await writeFile(join(stateDir, 'pki', 'ca.pem'), 'the rotated CA certificate\n')
    assert.deepEqual((await ship()).shipped, ['kit/pki/ca.pem'])
    // A gateway.env naming DATABASE_URL is not shipped (that database is not the archived one; the URL may hold
    // a password): the remote keeps the last one without it. A changed one without it goes again.
    await writeFile(oldEnvFile, `${BINDS}DATABASE_URL=postgres://fleetkit:secret@db.example.net/fleetkit\n`)
    assert.deepEqual((await ship()).shipped, [])
    assert.equal(await readFile(join(remoteDir, 'kit', 'gateway.env'), 'utf8'), BINDS)
    await writeFile(oldEnvFile, `${BINDS}FLEETKIT_AGENT_CERT_LIFETIME=86400\n`)
    assert.deepEqual((await ship()).shipped, ['kit/gateway.env'])
    assert.equal(again.lastShippedWal, firstShip.lastShippedWal)
    // A run killed after the rename, before the checksum: the file is there, its .sha256 is not (and a .part lies about).
    const victim = firstShip.lastShippedWal!
    await unlink(join(remoteDir, 'wal', `${victim}.sha256`))
    await writeFile(join(remoteDir, 'wal', `${victim}.sha256.part`), 'half')
    const resumed = await ship()
    assert.deepEqual(resumed.shipped, [`wal/${victim}`])
    assert.ok((await readdir(join(remoteDir, 'wal'))).includes(`${victim}.sha256`))
  })

  it('a remote that is down: local archiving goes on, ship fails with a coded error, and the next ship sends the backlog', async () => {
    await sshd.stop()
    let waiting: string
    try {
      waiting = await writeAndArchive('ship_while_down')
      const db = await open()
      try {
        const status = await readArchiverStatus(db.pool)
        assert.ok(
          status.lastArchivedWal! >= waiting &&
            (status.failedCount === 0 || status.lastFailedAt! < status.lastArchivedAt!),
        )
      } finally {
        await db.close()
      }
      await assert.rejects(ship(), hasCode('ARCHIVE_REMOTE_UNREACHABLE'))
      const status = await runFleetkit(['db', 'status', '--json', '--state-dir', stateDir], cliEnv)
      assert.equal(status.code, 0, status.stderr)
      assertMatchesOutputSchema('db-status', status.json)
      const shipping = status.json.result.archive.shipping
      assert.equal(shipping.lastError.code, 'ARCHIVE_REMOTE_UNREACHABLE')
      assert.ok(shipping.unshippedSegments >= 1, JSON.stringify(shipping))
      // The gateway's gauges say the same (read from the files at scrape time, no remote dialled).
      const scraped = await open()
      try {
        const registry = new Registry()
        registerArchiveGauges(registry, scraped.pool, (query, error) => assert.fail(`${query}: ${String(error)}`), {
          stateDir,
          now: () => new Date(),
        })
        const text = await registry.metrics()
        assert.match(text, new RegExp(`^fleetkit_wal_archive_unshipped_segments ${shipping.unshippedSegments}$`, 'm'))
        assert.match(
          text,
          new RegExp(
            `^fleetkit_wal_archive_ship_last_success_timestamp_seconds ${Math.floor(new Date(shipping.lastSuccessAt).getTime() / 1000)}$`,
            'm',
          ),
        )
      } finally {
        await scraped.close()
      }
    } finally {
      await sshd.start()
    }
    const caughtUp = await ship()
    assert.ok(caughtUp.shipped.includes(`wal/${waiting}`), JSON.stringify(caughtUp.shipped))
    const status = await runFleetkit(['db', 'status', '--json', '--state-dir', stateDir], cliEnv)
    assert.equal(status.json.result.archive.shipping.lastError, null)
    assert.equal(status.json.result.archive.shipping.unshippedSegments, 0)
  })

  it('verify --remote finds a tampered file; verify --remote --restore proves a restore reaches the newest segment', async () => {
    const local = await verify({ remote: false, restore: false })
    assert.equal(local.source, 'local')
    const clean = await verify({ remote: true, restore: false })
    assert.deepEqual(clean.damaged, [])
    assert.equal(clean.wal?.missingCount, 0)

    const victim = join(remoteDir, 'wal', firstShip.lastShippedWal!)
    const original = await readFile(victim)
    const tampered = Buffer.from(original)
    tampered[1000] = tampered[1000]! ^ 0xff
    await writeFile(victim, tampered)
    const found = await verify({ remote: true, restore: false }).catch((error: unknown) => error)
    assert.ok(hasCode('ARCHIVE_VERIFY_FAILED')(found), String(found))
    const damaged = (found as { data: { damaged: { file: string }[] } }).data.damaged
    assert.deepEqual(
      damaged.map((d) => d.file),
      [`wal/${firstShip.lastShippedWal}`],
    )
    await writeFile(victim, original)

    const newest = await writeAndArchive('ship_newest')
    await ship()
    const cli = await runFleetkit(
      ['db', 'archive', 'verify', '--remote', '--restore', '--state-dir', stateDir, '--json'],
      cliEnv,
    )
    assert.equal(cli.code, 0, cli.stdout + cli.stderr)
    assertMatchesOutputSchema('db-archive-verify', cli.json)
    const proved = cli.json.result as Awaited<ReturnType<typeof verifyArchive>>
    assert.ok(proved.wal!.newest! >= newest, `${proved.wal!.newest} >= ${newest}`)
    assert.ok(proved.restore!.reachedWal! >= newest.slice(8), JSON.stringify(proved.restore))
    assert.ok(!(await readdir(stateDir)).some((n) => n.startsWith('verify-')), 'the scratch directory is gone')
    // The scratch restore archived nothing into the archive it read (archiving off there).
    assert.ok(!(await readdir(join(archiveDir, 'wal'))).some((n) => n.endsWith('.history')))
  })

  it('a new machine: fetch the remote copy into a fresh directory, restore --to latest into a fresh state directory', async () => {
    const last = await writeAndArchive('ship_last')
    await ship()
    const fetched = join(root, 'fetched')
    const newState = join(root, 'new-machine')
    const fetch = await runFleetkit(
      [
        'db',
        'archive',
        'fetch',
        url,
        fetched,
        '--host-key',
        sshd.knownHostsLine,
        '--identity',
        sshd.clientKey.path,
        '--state-dir',
        newState,
        '--gateway-env',
        newEnvFile,
        '--json',
      ],
      cliEnv,
    )
    assert.equal(fetch.code, 0, fetch.stdout + fetch.stderr)
    // The old host's gateway.env where the new machine's unit reads it, the directory made, mode 0600.
    assert.equal(fetch.json.result.gatewayEnv, 'fetched')
    assert.equal(await readFile(newEnvFile, 'utf8'), `${BINDS}FLEETKIT_AGENT_CERT_LIFETIME=86400\n`)
    assert.equal((await stat(newEnvFile)).mode & 0o777, 0o600)
    assertMatchesOutputSchema('db-archive-fetch', fetch.json)
    assert.ok(fetch.json.result.newestWal >= last)
    // The kit: the password the restored server is reached with, and the PKI directory.
    assert.equal(
      await readFile(join(newState, 'postgres', 'password'), 'utf8'),
      await readFile(join(stateDir, 'postgres', 'password'), 'utf8'),
    )
    assert.equal(await readFile(join(newState, 'pki', 'ca.pem'), 'utf8'), 'the rotated CA certificate\n')
    // The published release, whole, where the new machine's gateway serves it; nothing else.
    assert.deepEqual(fetch.json.result.releases, [RELEASE_VERSION])
    assert.deepEqual(await readdir(join(newState, 'releases')), [RELEASE_VERSION])
    assert.deepEqual((await readdir(join(newState, 'releases', RELEASE_VERSION))).sort(), [...RELEASE_FILES].sort())
    for (const name of RELEASE_FILES)
      assert.equal(
        await readFile(join(newState, 'releases', RELEASE_VERSION, name), 'utf8'),
        `${name} of ${RELEASE_VERSION}\n`,
      )
    // Again into the same state directory: refused, nothing fetched.
    const twice = await runFleetkit(
      [
        'db',
        'archive',
        'fetch',
        url,
        join(root, 'fetched-again'),
        '--host-key',
        sshd.knownHostsLine,
        '--identity',
        sshd.clientKey.path,
        '--state-dir',
        newState,
        '--json',
      ],
      cliEnv,
    )
    assert.equal(twice.json.code, 'RESTORE_TARGET_NOT_EMPTY', twice.stdout + twice.stderr)
    assert.ok(!existsSync(join(root, 'fetched-again')))
    // The old machine's server stops before the new one starts (as the runbook says).
    await stopEmbeddedServer(stateDir)
    const restore = await runFleetkit(
      ['db', 'restore', '--to', 'latest', '--archive', fetched, '--state-dir', newState, '--json'],
      cliEnv,
    )
    assert.equal(restore.code, 0, restore.stdout + restore.stderr)
    assertMatchesOutputSchema('db-restore', restore.json)
    const db = await open(newState)
    try {
      assert.deepEqual(await kinds(db), ['ship_first', 'ship_while_down', 'ship_newest', 'ship_last'])
    } finally {
      await db.close()
    }
  })

  it('one directory, one cluster: cluster.json names this cluster; a directory naming another is refused with ARCHIVE_REMOTE_FOREIGN, nothing sent or recorded', async () => {
    const marker = join(remoteDir, 'cluster.json')
    const claimed = JSON.parse(await readFile(marker, 'utf8')) as { systemIdentifier: string }
    // The identifier read from pg_control is the server's own, and the machine restored from the archive keeps it.
    const db = await open(join(root, 'new-machine'))
    try {
      const { rows } = await db.pool.query<{ id: string }>(
        'SELECT system_identifier::text AS id FROM pg_control_system()',
      )
      assert.equal(claimed.systemIdentifier, rows[0]!.id)
    } finally {
      await db.close()
    }
    // Another cluster's directory (as if a second control host had claimed it first).
    const original = await readFile(marker, 'utf8')
    await writeFile(marker, JSON.stringify({ systemIdentifier: '7123456789012345678', claimedBy: 'control-b' }))
    try {
      const remoteFiles = async () => (await readdir(remoteDir, { recursive: true })).sort()
      const before = await remoteFiles()
      await assert.rejects(ship(), (error: unknown) => {
        assert.equal((error as { code?: string }).code, 'ARCHIVE_REMOTE_FOREIGN')
        assert.match(
          (error as Error).message,
          /another PostgreSQL cluster \(system identifier 7123456789012345678, claimed by control-b/,
        )
        return true
      })
      assert.deepEqual(await remoteFiles(), before, 'nothing sent')
      // The original machine's state (its server stopped: remote add reads files only).
      const add = await remoteAddCli()
      assert.equal(add.json.code, 'ARCHIVE_REMOTE_FOREIGN', add.stdout + add.stderr)
      assert.equal(add.code, 2)
      assert.deepEqual(await remoteFiles(), before, 'nothing sent')
      // A host serving a text file far larger than any of ours is not read into memory.
      await writeFile(marker, 'x'.repeat(2 * 1024 * 1024))
      await assert.rejects(ship(), (error: unknown) => {
        assert.equal((error as { code?: string }).code, 'ARCHIVE_REMOTE_FAILED')
        assert.match((error as Error).message, /cluster\.json: larger than 1048576 bytes/)
        return true
      })
    } finally {
      await writeFile(marker, original)
    }
  })

  it('two clusters claiming one empty directory at once: exactly one claims it, the other is refused', async () => {
    const path = join(root, 'vault', 'contested')
    const remote = await checkedArchiveRemote(
      {
        url: `ssh://${process.env.USER ?? 'root'}@127.0.0.1:${sshd.port}${path}`,
        hostKeyLine: sshd.knownHostsLine,
        identityFile: sshd.clientKey.path,
      },
      new Date(),
    )
    await mkdir(path, { recursive: true })
    // Both see the directory empty before either writes: their lists wait for each other.
    let listed = 0
    let bothListed: () => void = () => undefined
    const barrier = new Promise<void>((resolve) => (bothListed = resolve))
    const racing = async (files: RemoteArchiveFiles): Promise<RemoteArchiveFiles> => ({
      ...files,
      list: async (dir) => {
        const names = await files.list(dir)
        if (listed < 2 && ++listed === 2) bothListed()
        await barrier
        return names
      },
    })
    const connections = await Promise.all([openRemote(remote), openRemote(remote)])
    try {
      const outcomes = await Promise.allSettled(
        ['7000000000000000001', '7000000000000000002'].map(async (id, i) =>
          claimRemoteForCluster(await racing(connections[i]!), remote, id, new Date()),
        ),
      )
      const claimed = outcomes.filter((o) => o.status === 'fulfilled')
      const refused = outcomes.filter((o) => o.status === 'rejected')
      assert.deepEqual(
        claimed.map((o) => o.value),
        ['claimed'],
        JSON.stringify(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : String(o.reason)))),
      )
      assert.equal((refused[0]?.reason as { code?: string }).code, 'ARCHIVE_REMOTE_FOREIGN')
      const winner = outcomes.findIndex((o) => o.status === 'fulfilled')
      const held = JSON.parse(await readFile(join(path, 'cluster.json'), 'utf8')) as { systemIdentifier: string }
      assert.equal(held.systemIdentifier, ['7000000000000000001', '7000000000000000002'][winner])
      assert.deepEqual(await readdir(path), ['cluster.json'], 'no part file left behind')
      // The winner's next claim finds it its own.
      assert.equal(await claimRemoteForCluster(connections[winner]!, remote, held.systemIdentifier, new Date()), 'ours')
    } finally {
      for (const files of connections) files.close()
    }
  })

  it("remote remove: the record and the last ship's status go, ship refuses, the remote keeps its files; remote add takes it up again", async () => {
    const walThere = await readdir(join(remoteDir, 'wal'))
    const removed = await runFleetkit(['db', 'archive', 'remote', 'remove', '--state-dir', stateDir, '--json'], cliEnv)
    assert.equal(removed.code, 0, removed.stdout + removed.stderr)
    assertMatchesOutputSchema('db-archive-remote-remove', removed.json)
    assert.deepEqual(removed.json.result, { url, changed: true })
    assert.ok(!existsSync(join(stateDir, 'postgres', 'archive-remote.json')))
    assert.ok(!existsSync(join(stateDir, 'postgres', 'archive-ship.json')))
    await assert.rejects(ship(), (error: unknown) => (error as { code?: string }).code === 'ARCHIVE_REMOTE_NOT_SET')
    assert.deepEqual(await readdir(join(remoteDir, 'wal')), walThere, 'the files on the host are kept')
    const again = await runFleetkit(['db', 'archive', 'remote', 'remove', '--state-dir', stateDir, '--json'], cliEnv)
    assert.equal(again.code, 0, again.stdout + again.stderr)
    assert.deepEqual(again.json.result, { url: null, changed: false })
    // The directory is this cluster's (cluster.json): adding it again takes it up where it was.
    const add = await remoteAddCli()
    assert.equal(add.code, 0, add.stdout + add.stderr)
    assert.equal(add.json.result.changed, true)
    // One event each time something changed (the second remove changed nothing).
    assert.deepEqual(
      (await remoteEvents()).slice(-2).map((e) => [e.kind, e.data]),
      [
        ['archive_remote_removed', { actor: 'ci@offhost', url }],
        [
          'archive_remote_added',
          {
            actor: 'ci@offhost',
            url,
            host_key: add.json.result.hostKey,
            identity_file: sshd.clientKey.path,
            previous_url: null,
          },
        ],
      ],
    )
  })

  it('remote add and remove whose event cannot be recorded (the database refuses) leave the recorded remote as it was', async () => {
    const record = join(stateDir, 'postgres', 'archive-remote.json')
    const recorded = await readFile(record, 'utf8')
    const ship = await readFile(join(stateDir, 'postgres', 'archive-ship.json'), 'utf8').catch(() => undefined)
    const events = (await remoteEvents()).length
    const refused = () =>
      Promise.reject(Object.assign(new Error('the state is unreachable'), { code: 'STATE_UNREACHABLE' }))
    const unreachable = (error: unknown) => (error as { code?: string }).code === 'STATE_UNREACHABLE'
    await assert.rejects(removeRemote({ stateDir, env: {}, actor: 'ci@offhost', withPool: refused }), unreachable)
    assert.equal(await readFile(record, 'utf8'), recorded, 'the remote is still recorded')
    assert.equal(
      await readFile(join(stateDir, 'postgres', 'archive-ship.json'), 'utf8').catch(() => undefined),
      ship,
      "and the last ship's status",
    )
    // Another identity for the same remote: a change, refused as a whole.
    const other = join(root, 'other-identity')
    await writeFile(other, await readFile(sshd.clientKey.path), { mode: 0o600 })
    await assert.rejects(
      addArchiveRemote({
        ...quiet,
        stateDir,
        url,
        hostKeyLine: sshd.knownHostsLine,
        identityFile: other,
        openRemote,
        actor: 'ci@offhost',
        withPool: refused,
      }),
      unreachable,
    )
    assert.equal(await readFile(record, 'utf8'), recorded, 'the remote before is put back')
    assert.equal((await remoteEvents()).length, events)
  })
})
