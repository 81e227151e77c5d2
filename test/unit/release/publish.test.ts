// `fleetkit release publish` as a library: a release packed with packRelease and signed in process is
// verified against the definition's key before anything is written, lands whole in
// <state dir>/releases/<version>/, is idempotent for the same bytes and refused (or replaced on
// purpose) for other bytes; refusals write nothing.
import assert from 'node:assert/strict'
import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { rawPublicKey } from '../../../src/release/ed25519-keys.js'
import { packRelease } from '../../../src/release/pack-release.js'
import { type PublishOptions, publishRelease } from '../../../src/release/publish-release.js'
import { signSums } from '../../../src/release/signature.js'
import { validDefinition } from '../../support/definition-fixture.js'

const VERSION = '2.1.0'

async function codeOf(work: Promise<unknown>): Promise<string> {
  try {
    await work
  } catch (error) {
    if (error instanceof FleetkitError) return error.code
    throw error
  }
  return 'no error'
}

/** Every file under `dir`, relative, with its bytes: what a refusal must leave exactly as it was. */
async function snapshot(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])
  for (const entry of entries) {
    const path = join(entry.parentPath, entry.name)
    out.set(path.slice(dir.length), entry.isFile() ? (await readFile(path)).toString('base64') : 'dir')
  }
  return out
}

describe('release publish', function () {
  this.timeout(60_000)
  let dir: string
  let key: KeyObject
  let good: string
  let other: string

  /** Packs a script printing `text` as VERSION for the given architectures into DIR/NAME and signs it with `signer`. */
  async function release(name: string, text: string, signer: KeyObject, archs = ['amd64', 'arm64']) {
    const dist = join(dir, `dist-${name}`)
    for (const arch of archs) {
      await mkdir(join(dist, `linux-${arch}`), { recursive: true })
      await writeFile(join(dist, `linux-${arch}`, 'fleetkit-agent'), `#!/bin/sh\necho "fleetkit-agent ${text}"\n`)
    }
    const out = join(dir, name)
    await packRelease({ version: VERSION, inputDir: dist, outputDir: out })
    await sign(out, signer)
    return out
  }

  async function sign(releaseDir: string, signer: KeyObject) {
    await writeFile(
      join(releaseDir, 'SHA256SUMS.sig'),
      signSums(await readFile(join(releaseDir, 'SHA256SUMS')), signer),
    )
  }

  function definition(publicKey = rawPublicKey(key), url = 'https://enroll.fleet.internal:8444') {
    const d = validDefinition()
    return { gateway: d.gateway, release: { ...d.release, url, publicKey } }
  }

  async function stateDir(name: string): Promise<string> {
    const path = join(dir, 'state', name)
    await mkdir(path, { recursive: true })
    return path
  }

  function publish(options: Partial<PublishOptions> & { stateDir: string }) {
    return publishRelease({ dir: good, version: VERSION, definition: definition(), replace: false, ...options })
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-publish-'))
    key = generateKeyPairSync('ed25519').privateKey
    good = await release('good', VERSION, key)
    other = await release('other', `${VERSION} rebuilt`, key)
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('verifies, then writes SHA256SUMS, the signature and each archive to <state dir>/releases/<version>/', async () => {
    const state = await stateDir('first')
    const result = await publish({ stateDir: state })
    const target = join(state, 'releases', VERSION)
    assert.equal(result.status, 'published')
    assert.equal(result.dir, target)
    assert.deepEqual(result.architectures, ['amd64', 'arm64'])
    assert.equal(result.url, `https://enroll.fleet.internal:8444/${VERSION}/`)
    assert.equal(result.servedByGateway, true)
    const names = [
      'SHA256SUMS',
      'SHA256SUMS.sig',
      `fleetkit-agent-${VERSION}-linux-amd64.tar.zst`,
      `fleetkit-agent-${VERSION}-linux-arm64.tar.zst`,
    ]
    assert.deepEqual((await readdir(target)).sort(), names)
    for (const name of names) {
      assert.ok((await readFile(join(target, name))).equals(await readFile(join(good, name))), name)
      assert.equal((await stat(join(target, name))).mode & 0o777, 0o644, name)
    }
    // The temporary directory was renamed into place and the lock removed: nothing else is left.
    assert.deepEqual(await readdir(join(state, 'releases')), [VERSION])
  })

  it('only the signed files: a stray file in the version directory is not published', async () => {
    const stray = join(dir, 'stray')
    await cp(good, stray, { recursive: true })
    await writeFile(join(stray, 'notes.txt'), 'not part of the release')
    const state = await stateDir('stray')
    await publishRelease({ dir: stray, version: VERSION, definition: definition(), replace: false, stateDir: state })
    assert.ok(!(await readdir(join(state, 'releases', VERSION))).includes('notes.txt'))
  })

  it('the same bytes again change nothing (unchanged)', async () => {
    const state = await stateDir('again')
    await publish({ stateDir: state })
    const target = join(state, 'releases', VERSION)
    const before = await stat(target)
    const result = await publish({ stateDir: state })
    assert.equal(result.status, 'unchanged')
    const after = await stat(target)
    assert.equal(after.ino, before.ino)
    assert.equal(after.mtimeMs, before.mtimeMs)
  })

  it('other bytes under a published version are refused (RELEASE_ALREADY_PUBLISHED), and replaced with --replace', async () => {
    const state = await stateDir('other')
    await publish({ stateDir: state })
    const published = await snapshot(join(state, 'releases'))
    assert.equal(await codeOf(publish({ stateDir: state, dir: other })), 'RELEASE_ALREADY_PUBLISHED')
    assert.deepEqual(await snapshot(join(state, 'releases')), published)

    const result = await publish({ stateDir: state, dir: other, replace: true })
    assert.equal(result.status, 'replaced')
    const target = join(state, 'releases', VERSION)
    for (const name of await readdir(other))
      assert.ok((await readFile(join(target, name))).equals(await readFile(join(other, name))), name)
    // The old release moved aside and was removed; no temporary directory is left.
    assert.deepEqual(await readdir(join(state, 'releases')), [VERSION])
  })

  it('a release that drops an architecture is other bytes too', async () => {
    const state = await stateDir('fewer')
    await publish({ stateDir: state })
    const amd64Only = await release('amd64-only', VERSION, key, ['amd64'])
    assert.equal(await codeOf(publish({ stateDir: state, dir: amd64Only })), 'RELEASE_ALREADY_PUBLISHED')
    await publish({ stateDir: state, dir: amd64Only, replace: true })
    assert.equal((await readdir(join(state, 'releases', VERSION))).length, 3)
  })

  it('refuses a release signed with another key (RELEASE_SIGNATURE_INVALID) and writes nothing', async () => {
    const state = await stateDir('foreign')
    const foreign = generateKeyPairSync('ed25519').privateKey
    const code = await codeOf(publish({ stateDir: state, definition: definition(rawPublicKey(foreign)) }))
    assert.equal(code, 'RELEASE_SIGNATURE_INVALID')
    assert.deepEqual(await readdir(state), [])
  })

  it('refuses a tampered archive (RELEASE_CHECKSUM_MISMATCH) and writes nothing', async () => {
    const tampered = join(dir, 'tampered')
    await cp(good, tampered, { recursive: true })
    const archive = join(tampered, `fleetkit-agent-${VERSION}-linux-arm64.tar.zst`)
    const bytes = await readFile(archive)
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff
    await writeFile(archive, bytes)
    const state = await stateDir('tampered')
    assert.equal(await codeOf(publish({ stateDir: state, dir: tampered })), 'RELEASE_CHECKSUM_MISMATCH')
    assert.deepEqual(await readdir(state), [])
  })

  it('refuses sums that list another version (RELEASE_VERSION_MISMATCH) or another file (RELEASE_INPUT_INVALID)', async () => {
    const state = await stateDir('names')
    // The release of 2.1.0 published as 2.2.0: its signed names say otherwise.
    assert.equal(await codeOf(publish({ stateDir: state, version: '2.2.0' })), 'RELEASE_VERSION_MISMATCH')
    const extra = join(dir, 'extra-line')
    await cp(good, extra, { recursive: true })
    const sums = await readFile(join(extra, 'SHA256SUMS'), 'utf8')
    await writeFile(join(extra, 'SHA256SUMS'), `${sums}${'0'.repeat(64)}  install.sh\n`)
    await sign(extra, key)
    assert.equal(await codeOf(publish({ stateDir: state, dir: extra })), 'RELEASE_INPUT_INVALID')
    assert.equal(await codeOf(publish({ stateDir: state, version: '../2.1.0' })), 'RELEASE_INPUT_INVALID')
    assert.deepEqual(await readdir(state), [])
  })

  it('refuses a state directory that does not exist (STATE_DIR_UNUSABLE) and creates nothing', async () => {
    const missing = join(dir, 'state', 'never-made')
    assert.equal(await codeOf(publish({ stateDir: missing })), 'STATE_DIR_UNUSABLE')
    await assert.rejects(stat(missing), { code: 'ENOENT' })
  })

  it('removes what a crashed publish left; such a directory was never the version', async () => {
    const state = await stateDir('crashed')
    const leftover = join(state, 'releases', `.${VERSION}.0123456789ab.tmp`)
    await mkdir(leftover, { recursive: true })
    await writeFile(join(leftover, 'SHA256SUMS'), 'half a release')
    await publish({ stateDir: state })
    assert.deepEqual(await readdir(join(state, 'releases')), [VERSION])
  })

  it('two publishes at once: one writes, the other finds the same bytes, or refuses other ones', async () => {
    const same = await stateDir('race-same')
    const statuses = await Promise.all([publish({ stateDir: same }), publish({ stateDir: same })])
    assert.deepEqual(statuses.map((r) => r.status).sort(), ['published', 'unchanged'])
    const differ = await stateDir('race-other')
    const settled = await Promise.allSettled([publish({ stateDir: differ }), publish({ stateDir: differ, dir: other })])
    assert.equal(settled.filter((s) => s.status === 'fulfilled').length, 1)
    const refused = settled.find((s) => s.status === 'rejected') as PromiseRejectedResult
    assert.equal((refused.reason as FleetkitError).code, 'RELEASE_ALREADY_PUBLISHED')
  })

  it('waits for another publish and gives up with RELEASE_PUBLISH_BUSY, publishing nothing', async () => {
    const state = await stateDir('busy')
    await mkdir(join(state, 'releases'))
    // PID 1 is alive: its lock is never broken as stale.
    await writeFile(join(state, 'releases', '.publish.lock'), '1 0 other\n')
    await chmod(join(state, 'releases', '.publish.lock'), 0o600)
    const code = await codeOf(publish({ stateDir: state, lock: { timeoutMs: 200, pollMs: 20 } }))
    assert.equal(code, 'RELEASE_PUBLISH_BUSY')
    assert.deepEqual(await readdir(join(state, 'releases')), ['.publish.lock'])
  })

  it('says when release.url is not the gateway: hosts fetch from the mirror, not this copy', async () => {
    const state = await stateDir('mirror')
    const result = await publish({
      stateDir: state,
      definition: definition(rawPublicKey(key), 'https://releases.fleet.internal/fleetkit-agent/'),
    })
    assert.equal(result.servedByGateway, false)
    assert.equal(result.url, `https://releases.fleet.internal/fleetkit-agent/${VERSION}/`)
  })
})
