import assert from 'node:assert/strict'
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { fakeAgent, opensslKeyPair, releaseCli, releaseJson, run } from './release-cli.js'

/** The base64 body lines of a PEM, and the raw private scalar: none may appear in any output. */
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

describe('fleetkit release sign', function () {
  this.timeout(60_000)
  let dir: string
  let out: string
  let keys: { key: string; pub: string; raw: string }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-release-sign-'))
    keys = await opensslKeyPair(dir, 'release')
    await fakeAgent(join(dir, 'dist'), 'amd64', '3.0.0')
    out = join(dir, 'out')
    await releaseJson('pack', ['--version', '3.0.0', '--input', join(dir, 'dist'), '--output', out])
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('writes SHA256SUMS.sig and prints the public key, never the private key (human and --json)', async () => {
    const fragments = await secretFragments(keys.key)
    const human = await releaseCli('sign', ['--key', keys.key, '--dir', out])
    assert.equal(human.code, 0, human.stderr)
    assert.match(human.stdout, new RegExp(keys.raw.replace(/[+/]/g, '\\$&')))
    assertNoSecret(human.stdout + human.stderr, fragments)
    const json = await releaseJson('sign', ['--key', keys.key, '--dir', out])
    assert.equal(json.code, 0)
    assertNoSecret(json.stdout + json.stderr, fragments)
    assert.match(await readFile(join(out, 'SHA256SUMS.sig'), 'utf8'), /^[A-Za-z0-9+/]{86}==\n$/)
  })

  it('refuses a key file group or others can read (RELEASE_KEY_UNPROTECTED) and writes nothing', async () => {
    const fragments = await secretFragments(keys.key)
    await rm(join(out, 'SHA256SUMS.sig'), { force: true })
    for (const mode of [0o640, 0o644, 0o604]) {
      await chmod(keys.key, mode)
      const refused = await releaseJson('sign', ['--key', keys.key, '--dir', out])
      assert.equal(refused.code, 19, refused.stdout)
      assert.equal(refused.json.code, 'RELEASE_KEY_UNPROTECTED')
      assertNoSecret(refused.stdout + refused.stderr, fragments)
      await assert.rejects(stat(join(out, 'SHA256SUMS.sig')))
    }
    await chmod(keys.key, 0o600)
  })

  it('refuses a key that is not Ed25519 without echoing it (RELEASE_KEY_INVALID)', async () => {
    const ecKey = join(dir, 'ec.key')
    await run('openssl', ['genpkey', '-algorithm', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', ecKey])
    await chmod(ecKey, 0o600)
    const garbage = join(dir, 'garbage.key')
    await writeFile(garbage, 'this-is-a-secret-not-a-key\n', { mode: 0o600 })
    for (const key of [ecKey, garbage]) {
      const refused = await releaseJson('sign', ['--key', key, '--dir', out])
      assert.equal(refused.code, 18, refused.stdout)
      assert.equal(refused.json.code, 'RELEASE_KEY_INVALID')
      assertNoSecret(
        refused.stdout + refused.stderr,
        key === garbage ? ['this-is-a-secret'] : await secretFragments(ecKey),
      )
    }
  })

  it('refuses a directory without SHA256SUMS (RELEASE_INPUT_INVALID)', async () => {
    const refused = await releaseJson('sign', ['--key', keys.key, '--dir', join(dir, 'empty')])
    assert.equal(refused.code, 10)
    assert.equal(refused.json.code, 'RELEASE_INPUT_INVALID')
  })
})
