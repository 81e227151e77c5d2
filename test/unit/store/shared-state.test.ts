// A state shared by the gateway service's account and its group (fleetkit gateway install): who
// owns what and with which mode, whom root runs the embedded server as, the password file's mode,
// the default state directory, and the refusal to start another account's server. These chown, so
// they run as root (as the suite does).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

import { resolveStateDir } from '../../../src/config/state-dir.js'
import { applyOwnership, planRootState, planSharedState } from '../../../src/gateway/install/state-sharing.js'
import { writeArchiveConfig } from '../../../src/store/embedded/archive-dir.js'
import {
  type ArchiveRemote,
  type ShipStatus,
  readArchiveRemote,
  readShipStatus,
  writeArchiveRemote,
  writeShipStatus,
} from '../../../src/store/embedded/archive-remote.js'
import { readOrCreatePassword, readPasswordFile } from '../../../src/store/embedded/password-file.js'
import { embeddedServerPaths } from '../../../src/store/embedded/paths.js'
import { packagePath } from '../../../src/package-root.js'
import { postgresRunAs } from '../../../src/store/postgres-binaries.js'

const run = promisify(execFile)
const ACCOUNT = { uid: 61011, gid: 61012 }
const REMOTE: ArchiveRemote = {
  url: 'ssh://archive@vault.example.net/srv/fleetkit-archive',
  user: 'archive',
  host: 'vault.example.net',
  port: 22,
  path: '/srv/fleetkit-archive',
  hostKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl',
  identityFile: '/root/.ssh/fleetkit-archive',
  addedAt: '2026-12-06T21:00:00.000Z',
}
const SHIPPED: ShipStatus = {
  lastShippedWal: '000000010000000000000003',
  lastSuccessAt: '2026-12-06T21:02:00.000Z',
  lastAttemptAt: '2026-12-06T21:02:00.000Z',
  lastError: null,
}

async function owner(path: string): Promise<[number, number, string]> {
  const info = await stat(path)
  return [info.uid, info.gid, (info.mode & 0o7777).toString(8).padStart(4, '0')]
}

describe('store: a state shared with the gateway service', function () {
  this.timeout(30_000)
  let dir: string
  let state: string

  beforeEach(async () => {
    assert.equal(process.getuid?.(), 0, 'these tests chown: run them as root')
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-shared-'))
    await chmod(dir, 0o755)
    state = join(dir, 'state')
    // Root's own state, as fleetkit leaves it: postgres/ passable, data owned by postgres.
    await mkdir(join(state, 'postgres', 'data', 'base'), { recursive: true, mode: 0o700 })
    await mkdir(join(state, 'postgres', 'tmp'), { mode: 0o700 })
    await mkdir(join(state, 'pki'), { mode: 0o700 })
    await mkdir(join(state, 'seeds'), { mode: 0o700 })
    await chmod(state, 0o711)
    await chmod(join(state, 'postgres'), 0o711)
    await writeFile(join(state, 'postgres', 'password'), 'secret\n', { mode: 0o600 })
    await writeFile(join(state, 'postgres', 'server.json'), '{}\n', { mode: 0o644 })
    await writeFile(join(state, 'postgres', 'data', 'PG_VERSION'), '16\n', { mode: 0o600 })
    await writeFile(join(state, 'pki', 'ca.key'), 'key', { mode: 0o600 })
    await writeFile(join(state, 'pki', 'ca.pem'), 'pem', { mode: 0o644 })
    await writeFile(join(state, 'seeds', 'web-1.user-data'), 'seed', { mode: 0o600 })
    await run('chown', ['-R', '999:999', join(state, 'postgres', 'data')])
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('gives everything to the account: setgid directories for the group, keys and data private', async () => {
    const changes = await planSharedState(state, ACCOUNT)
    assert.ok(changes.every((c) => c.foreign))
    await applyOwnership(changes)
    const { uid, gid } = ACCOUNT
    assert.deepEqual(await owner(state), [uid, gid, '2770'])
    assert.deepEqual(await owner(join(state, 'postgres')), [uid, gid, '2770'])
    // PostgreSQL accepts 0700 or 0750; 0750 lets members read postmaster.pid.
    assert.deepEqual(await owner(join(state, 'postgres', 'data')), [uid, gid, '0750'])
    assert.deepEqual(await owner(join(state, 'postgres', 'data', 'base')), [uid, gid, '0700'])
    assert.deepEqual(await owner(join(state, 'postgres', 'data', 'PG_VERSION')), [uid, gid, '0600'])
    assert.deepEqual(await owner(join(state, 'postgres', 'tmp')), [uid, gid, '0700'])
    assert.deepEqual(await owner(join(state, 'postgres', 'password')), [uid, gid, '0640'])
    // The gateway refuses a PKI directory its group may write, and a key group or others may read.
    assert.deepEqual(await owner(join(state, 'pki')), [uid, gid, '2750'])
    assert.deepEqual(await owner(join(state, 'pki', 'ca.key')), [uid, gid, '0600'])
    assert.deepEqual(await owner(join(state, 'pki', 'ca.pem')), [uid, gid, '0644'])
    assert.deepEqual(await owner(join(state, 'seeds')), [uid, gid, '2770'])
    assert.deepEqual(await owner(join(state, 'seeds', 'web-1.user-data')), [uid, gid, '0600'])
    assert.deepEqual(await planSharedState(state, ACCOUNT), [], 'a second plan has nothing to do')
  })

  it('gives the state back to root, its data directory to postgres', async () => {
    await applyOwnership(await planSharedState(state, ACCOUNT))
    await applyOwnership(await planRootState(state, { uid: 999, gid: 999 }))
    assert.deepEqual(await owner(state), [0, 0, '0700'])
    assert.deepEqual(await owner(join(state, 'postgres', 'data')), [999, 999, '0700'])
    assert.deepEqual(await owner(join(state, 'postgres', 'password')), [0, 0, '0600'])
    assert.deepEqual(await owner(join(state, 'pki')), [0, 0, '0700'])
  })

  it("as root, runs the server as the data directory's owner; as an installed state's account before initdb", async () => {
    const root = embeddedServerPaths(state).root
    await applyOwnership(await planSharedState(state, ACCOUNT))
    assert.deepEqual(await postgresRunAs({ root, uid: 0 }), { ...ACCOUNT, account: 'owner' })
    await rm(join(root, 'data'), { recursive: true })
    assert.deepEqual(await postgresRunAs({ root, uid: 0 }), { ...ACCOUNT, account: 'owner' })
    assert.equal(await postgresRunAs({ root, uid: 1000 }), undefined, 'not root: the current user')
  })

  it('keeps the password file 0640 in a shared state, 0600 in a private one, and creates it so', async () => {
    await applyOwnership(await planSharedState(state, ACCOUNT))
    const shared = join(state, 'postgres', 'password')
    await chmod(shared, 0o664)
    assert.equal(await readPasswordFile(shared), 'secret')
    assert.equal((await stat(shared)).mode & 0o777, 0o640)
    await rm(shared)
    await readOrCreatePassword(shared)
    assert.deepEqual(await owner(shared), [ACCOUNT.uid, ACCOUNT.gid, '0640'])

    const privateDir = join(dir, 'private')
    await mkdir(privateDir, { mode: 0o700 })
    await writeFile(join(privateDir, 'password'), 'p\n', { mode: 0o640 })
    await readPasswordFile(join(privateDir, 'password'))
    assert.equal((await stat(join(privateDir, 'password'))).mode & 0o777, 0o600)
  })

  it("gives the archive's records to the account, group-readable, whoever writes them; 0600 in a private state", async () => {
    // Written by root before the install (archive enable, remote add, ship): taken over 0640.
    const paths = embeddedServerPaths(state)
    await writeArchiveRemote(paths, REMOTE)
    await applyOwnership(await planSharedState(state, ACCOUNT))
    assert.deepEqual(await owner(join(state, 'postgres', 'archive-remote.json')), [ACCOUNT.uid, ACCOUNT.gid, '0640'])
    // Written by root after it: the account's, 0640, so the gateway (its gauges) and members read them.
    await writeShipStatus(paths, SHIPPED)
    await writeArchiveRemote(paths, { ...REMOTE, addedAt: '2026-12-06T21:01:00.000Z' })
    await writeArchiveConfig(paths, { dir: '/var/backups/fleetkit-wal', enabledAt: '2026-12-06T21:00:00.000Z' })
    for (const name of ['archive-ship.json', 'archive-remote.json', 'archive.json'])
      assert.deepEqual(await owner(join(state, 'postgres', name)), [ACCOUNT.uid, ACCOUNT.gid, '0640'], name)
    assert.deepEqual(await readShipStatus(paths), SHIPPED)
    assert.equal((await readArchiveRemote(paths))?.addedAt, '2026-12-06T21:01:00.000Z')
    // Given back to root: private again.
    await applyOwnership(await planRootState(state, { uid: 999, gid: 999 }))
    assert.deepEqual(await owner(join(state, 'postgres', 'archive-ship.json')), [0, 0, '0600'])
    await writeShipStatus(paths, SHIPPED)
    assert.deepEqual(await owner(join(state, 'postgres', 'archive-ship.json')), [0, 0, '0600'])
  })

  it('makes the shared /var/lib/fleetkit the default state of whoever may use it', () => {
    const home = () => '/home/op'
    const shared = () => true
    const notShared = () => false
    assert.equal(resolveStateDir({ XDG_STATE_HOME: '/x' }, home, 1000, shared), '/var/lib/fleetkit')
    assert.equal(resolveStateDir({}, home, 1000, shared), '/var/lib/fleetkit')
    assert.equal(resolveStateDir({ FLEETKIT_STATE_DIR: '/srv/s' }, home, 1000, shared), '/srv/s')
    assert.equal(resolveStateDir({}, home, 1000, notShared), '/home/op/.local/state/fleetkit')
  })

  it('refuses (STATE_SERVER_NOT_STARTABLE) to start a server another account owns', async () => {
    await applyOwnership(await planSharedState(state, ACCOUNT))
    // A member of the group: not root, not the account. The real server code runs in a child as nobody.
    await run('chown', ['-R', `${ACCOUNT.uid}:65534`, state])
    await chmod(join(state, 'postgres', 'password'), 0o644)
    const script = `
      const { ensureEmbeddedServer } = await import(${JSON.stringify(new URL('../../../src/store/embedded/server.ts', import.meta.url).href)})
      // The account stands in for fleetkit-gateway, whose shared state a member may use (trusted-directory.ts).
      const trust = { trusted: (uid) => [0, 65534, ${ACCOUNT.uid}].includes(uid), sharedWithGroup: () => true }
      try { await ensureEmbeddedServer(${JSON.stringify(state)}, { trust }); console.log('started') }
      catch (e) { console.log(e.code, e.message) }`
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      uid: 65534,
      gid: 65534,
      cwd: packagePath(),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
    })
    assert.match(stdout, /^STATE_SERVER_NOT_STARTABLE the embedded PostgreSQL of .* belongs to uid 61011/)
    assert.match(stdout, /sudo systemctl start fleetkit-gateway/)
    assert.equal(await readFile(join(state, 'postgres', 'password'), 'utf8'), 'secret\n')
  })
})
