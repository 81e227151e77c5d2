// The kit's gateway.env against an edit at the wrong moment: the text shipped is the text checked, and a
// fetch never replaces a gateway.env the operator wrote while it ran. The remote is a local directory
// behind the same RemoteArchiveFiles the SFTP one implements (the SFTP side: offhost-archive.test.ts).
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

import { fetchKit, type KitPlaces, shipKit } from '../../../src/lifecycle/state/archive-kit.js'
import type { RemoteArchiveFiles } from '../../../src/lifecycle/state/remote-files.js'
import type { ArchiveRemote } from '../../../src/store/embedded/archive-remote.js'
import { embeddedServerPaths } from '../../../src/store/embedded/paths.js'

const BINDS = 'FLEETKIT_GATEWAY_BIND=10.0.0.1\n'
const WITH_URL = `${BINDS}DATABASE_URL=postgres://fleetkit:secret@db.internal/fleetkit\n`

/** A RemoteArchiveFiles over a local directory; `onGet`/`onPut` run when a given remote path is written or fetched. */
function localRemote(
  root: string,
  hooks: { onGet?: Record<string, () => Promise<void>>; onPut?: Record<string, () => Promise<void>> } = {},
): RemoteArchiveFiles {
  const at = (path: string) => join(root, path)
  const onPut = (path: string) => hooks.onPut?.[path.replace(/\.part$/, '')]?.()
  return {
    list: async (dir) => (await readdir(at(dir)).catch(() => [] as string[])).sort(),
    mkdirs: async (dir) => void (await mkdir(at(dir), { recursive: true })),
    put: async (local, path) => {
      await onPut(path)
      await copyFile(local, at(path))
    },
    putText: async (path, text) => {
      await onPut(path)
      await writeFile(at(path), text)
    },
    rename: (from, to) => rename(at(from), at(to)),
    renameNew: (from, to) => rename(at(from), at(to)),
    remove: (path) => rm(at(path), { force: true }),
    sha256: async (path) =>
      createHash('sha256')
        .update(await readFile(at(path)))
        .digest('hex'),
    readText: (path) => readFile(at(path), 'utf8'),
    get: async (path, local) => {
      await copyFile(at(path), local)
      await hooks.onGet?.[path]?.()
    },
    close: () => undefined,
  }
}

const remote: ArchiveRemote = {
  url: 'ssh://archive@backup.example/fleet',
  user: 'archive',
  host: 'backup.example',
  port: 22,
  path: '/fleet',
} as ArchiveRemote

describe('lifecycle: the off-host kit and an edit of gateway.env meanwhile', () => {
  let root: string
  let places: KitPlaces
  let remoteDir: string
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleetkit-kit-test-'))
    remoteDir = join(root, 'remote')
    await mkdir(remoteDir)
    const paths = embeddedServerPaths(join(root, 'state'))
    places = {
      paths,
      pkiDir: join(root, 'pki'),
      releasesDir: join(root, 'state', 'releases'),
      gatewayEnvFile: join(root, 'etc', 'gateway.env'),
    }
    await mkdir(dirname(paths.passwordFile), { recursive: true })
    await writeFile(paths.passwordFile, 'not-a-real-password\n', { mode: 0o600 })
    await mkdir(dirname(places.gatewayEnvFile), { recursive: true })
  })
  afterEach(() => rm(root, { recursive: true, force: true }))

  it('ships the text it checked: DATABASE_URL written in after the check does not reach the remote', async () => {
    await writeFile(places.gatewayEnvFile, BINDS, { mode: 0o600 })
    const files = localRemote(remoteDir, {
      onPut: { 'kit/gateway.env': () => writeFile(places.gatewayEnvFile, WITH_URL) },
    })
    const { shipped } = await shipKit(files, places, remote, () => undefined)
    assert.ok(shipped.includes('kit/gateway.env'), JSON.stringify(shipped))
    assert.equal(await readFile(join(remoteDir, 'kit', 'gateway.env'), 'utf8'), BINDS)
    // The next ship sees the URL and leaves the remote's copy as it was.
    assert.ok(
      !(await shipKit(localRemote(remoteDir), places, remote, () => undefined)).shipped.includes('kit/gateway.env'),
    )
    assert.equal(await readFile(join(remoteDir, 'kit', 'gateway.env'), 'utf8'), BINDS)
    assert.equal(
      await readFile(join(remoteDir, 'kit', 'gateway.env.sha256'), 'utf8'),
      `${createHash('sha256').update(BINDS).digest('hex')}  gateway.env\n`,
    )
  })

  it('a fetch writes the kit gateway.env 0600, and keeps one the operator wrote while it was fetched', async () => {
    await writeFile(places.gatewayEnvFile, BINDS, { mode: 0o600 })
    await shipKit(localRemote(remoteDir), places, remote, () => undefined)
    await rm(places.gatewayEnvFile)
    const fresh = (sub: string): KitPlaces => ({
      paths: embeddedServerPaths(join(root, sub, 'state')),
      pkiDir: join(root, sub, 'pki'),
      releasesDir: join(root, sub, 'state', 'releases'),
      gatewayEnvFile: join(root, sub, 'etc', 'gateway.env'),
    })

    const first = fresh('new-a')
    assert.equal((await fetchKit(localRemote(remoteDir), first, () => undefined)).gatewayEnv, 'fetched')
    assert.equal(await readFile(first.gatewayEnvFile, 'utf8'), BINDS)
    assert.equal((await stat(first.gatewayEnvFile)).mode & 0o777, 0o600)

    const raced = fresh('new-b')
    const operators = 'FLEETKIT_GATEWAY_BIND=192.0.2.7\n'
    const files = localRemote(remoteDir, {
      onGet: { 'kit/gateway.env': () => writeFile(raced.gatewayEnvFile, operators) },
    })
    assert.equal((await fetchKit(files, raced, () => undefined)).gatewayEnv, 'kept')
    assert.equal(await readFile(raced.gatewayEnvFile, 'utf8'), operators)
    assert.deepEqual(await readdir(dirname(raced.gatewayEnvFile)), ['gateway.env'], 'no .part left')
  })
})
