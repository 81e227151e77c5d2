// fleetkit release keygen: a key openssl reads and `release sign` signs with, whose printed public key
// `release verify` accepts; 0600; never over an existing file; never printed; kept out of Git.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, realpathSync } from 'node:fs'
import { readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { fakeAgent, releaseCli, releaseJson, run } from './release-cli.js'

/** The PEM, its base64 body and the raw 32-byte seed (base64 and hex): none may appear in any output. */
async function secretFragments(keyFile: string): Promise<string[]> {
  const pem = await readFile(keyFile, 'utf8')
  const body = pem.split('\n').filter((line) => line !== '' && !line.startsWith('-----'))
  const der = Buffer.from(body.join(''), 'base64')
  const seed = der.subarray(der.length - 32)
  return [pem, ...body, seed.toString('base64'), seed.toString('hex'), body.join('').slice(20, 40)]
}

function assertNoSecret(text: string, fragments: string[]): void {
  for (const fragment of fragments)
    assert.ok(!text.includes(fragment), `output holds key material ${fragment.slice(0, 12)}...`)
}

describe('fleetkit release keygen', function () {
  this.timeout(60_000)
  let dir: string

  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'fleetkit-release-keygen-')))
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('writes a 0600 PKCS#8 PEM key openssl reads to the same public key; --json by schema, without the private key', async () => {
    const key = join(dir, 'keys', 'release.key')
    const ran = await releaseJson('keygen', ['--output', key])
    assert.equal(ran.code, 0, ran.stdout + ran.stderr)
    assert.deepEqual(Object.keys(ran.json.result).sort(), ['keyFile', 'publicKey'])
    assert.equal(ran.json.result.keyFile, key)
    assert.equal((await stat(key)).mode & 0o777, 0o600)
    assert.equal((await stat(join(dir, 'keys'))).mode & 0o777, 0o700)
    const pem = await readFile(key, 'utf8')
    assert.match(pem, /^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=]{64}\n-----END PRIVATE KEY-----\n$/)
    assertNoSecret(ran.stdout + ran.stderr, await secretFragments(key))

    // openssl reads it (pkey -pubout) and derives the same raw public key.
    const spki = (await run('openssl', ['pkey', '-in', key, '-pubout', '-outform', 'DER'])).stdoutBytes
    assert.equal(spki.subarray(spki.length - 32).toString('base64'), ran.json.result.publicKey)
    // What openssl genpkey writes: the text form of openssl's own parse is an ED25519 private key.
    assert.match((await run('openssl', ['pkey', '-in', key, '-noout', '-text'])).stdout, /ED25519 Private-Key/)
  })

  it('the key signs a release that release verify accepts with the printed public key (human output)', async () => {
    const key = join(dir, 'human.key')
    const ran = await releaseCli('keygen', ['--output', key])
    assert.equal(ran.code, 0, ran.stderr)
    const publicKey = /release\.publicKey in fleet\.yaml\): ([A-Za-z0-9+/]{43}=)$/m.exec(ran.stdout)?.[1]
    assert.ok(publicKey, ran.stdout)
    assertNoSecret(ran.stdout + ran.stderr, await secretFragments(key))

    await fakeAgent(join(dir, 'dist'), 'amd64', '2.0.0')
    const out = join(dir, 'release', '2.0.0')
    assert.equal(
      (await releaseJson('pack', ['--version', '2.0.0', '--input', join(dir, 'dist'), '--output', out])).code,
      0,
    )
    const signed = await releaseJson('sign', ['--key', key, '--dir', out])
    assert.equal(signed.code, 0, signed.stdout)
    assert.equal(signed.json.result.publicKey, publicKey)
    const verified = await releaseJson('verify', [
      '--dir',
      out,
      '--version',
      '2.0.0',
      '--arch',
      'amd64',
      '--public-key',
      publicKey,
    ])
    assert.equal(verified.code, 0, verified.stdout)
  })

  it('refuses an existing file or link (RELEASE_KEY_EXISTS, exit 73), even with --force, and leaves it untouched', async () => {
    const existing = join(dir, 'existing.key')
    await writeFile(existing, 'an old key\n', { mode: 0o600 })
    const dangling = join(dir, 'dangling.key')
    await symlink(join(dir, 'nowhere'), dangling)
    for (const [path, extra] of [
      [existing, []],
      [existing, ['--force']],
      [dangling, []],
    ] as const) {
      const refused = await releaseJson('keygen', ['--output', path, ...extra])
      assert.equal(refused.code, 73, refused.stdout)
      assert.equal(refused.json.code, 'RELEASE_KEY_EXISTS')
      assert.match(refused.json.message, /never overwritten/)
      assert.deepEqual(refused.json.data, { path })
    }
    assert.equal(await readFile(existing, 'utf8'), 'an old key\n')
    assert.equal((await stat(existing)).mode & 0o777, 0o600)
    await assert.rejects(stat(join(dir, 'nowhere')))
    // A file where a directory of the path should be is a wrong path, not a key that exists.
    const below = await releaseJson('keygen', ['--output', join(existing, 'release.key')])
    assert.equal(below.json.code, 'RELEASE_INPUT_INVALID', below.stdout)
    assert.match(below.json.message, /existing\.key is a file, not a directory/)
    assert.equal(await readFile(existing, 'utf8'), 'an old key\n')
  })

  it('refuses a path inside a Git work tree that does not ignore it (SECRET_OUTPUT_IN_GIT); --force writes it', async () => {
    const repo = join(dir, 'fleet')
    execFileSync('git', ['init', '-q', repo])
    const key = join(repo, 'release.key')
    const refused = await releaseJson('keygen', ['--output', key])
    assert.equal(refused.code, 2, refused.stdout)
    assert.equal(refused.json.code, 'SECRET_OUTPUT_IN_GIT')
    assert.deepEqual(refused.json.data, { path: key, workTree: repo })
    await assert.rejects(stat(key))

    await writeFile(join(repo, '.gitignore'), '*.key\n')
    assert.equal((await releaseJson('keygen', ['--output', key])).code, 0)
    const forced = await releaseJson('keygen', ['--output', join(repo, 'release.pem'), '--force'])
    assert.equal(forced.code, 0, forced.stdout)
    assert.equal((await stat(join(repo, 'release.pem'))).mode & 0o777, 0o600)
  })

  it('never prints the key: --output - is a usage error', async () => {
    const refused = await releaseJson('keygen', ['--output', '-'])
    assert.equal(refused.code, 2)
    assert.equal(refused.json.code, 'USAGE_INVALID')
  })
})
