import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { fakeAgent, opensslKeyPair, releaseJson, run } from './release-cli.js'

describe('release signatures and openssl pkeyutl -rawin', function () {
  this.timeout(60_000)
  let dir: string
  let keys: { key: string; pub: string; raw: string }
  let foreign: { key: string; pub: string; raw: string }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-release-interop-'))
    keys = await opensslKeyPair(dir, 'release')
    foreign = await opensslKeyPair(dir, 'foreign')
    await fakeAgent(join(dir, 'dist'), 'amd64', '1.4.0')
    await fakeAgent(join(dir, 'dist'), 'arm64', '1.4.0')
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('signs with fleetkit; openssl pkeyutl -verify -rawin accepts it and openssl -sign gives the same bytes', async () => {
    const out = join(dir, 'a', '1.4.0')
    assert.equal(
      (await releaseJson('pack', ['--version', '1.4.0', '--input', join(dir, 'dist'), '--output', out])).code,
      0,
    )
    const signed = await releaseJson('sign', ['--key', keys.key, '--dir', out])
    assert.equal(signed.code, 0, signed.stdout)
    assert.equal((signed.json.result as { publicKey: string }).publicKey, keys.raw)

    const sigText = await readFile(join(out, 'SHA256SUMS.sig'), 'utf8')
    await writeFile(join(dir, 'a.sig.bin'), Buffer.from(sigText, 'base64'))
    const verified = await run('openssl', [
      'pkeyutl',
      '-verify',
      '-rawin',
      '-pubin',
      '-inkey',
      keys.pub,
      '-sigfile',
      join(dir, 'a.sig.bin'),
      '-in',
      join(out, 'SHA256SUMS'),
    ])
    assert.match(verified.stdout, /Signature Verified Successfully/)
    // Ed25519 is deterministic: openssl's own signature of the same bytes is identical.
    const opensslSig = (
      await run('openssl', ['pkeyutl', '-sign', '-rawin', '-inkey', keys.key, '-in', join(out, 'SHA256SUMS')])
    ).stdoutBytes
    assert.equal(opensslSig.toString('base64'), sigText.trim())
    // And openssl refuses it under a foreign key, so the check above can fail.
    await assert.rejects(
      run('openssl', [
        'pkeyutl',
        '-verify',
        '-rawin',
        '-pubin',
        '-inkey',
        foreign.pub,
        '-sigfile',
        join(dir, 'a.sig.bin'),
        '-in',
        join(out, 'SHA256SUMS'),
      ]),
    )
  })

  it('signs with openssl alone; fleetkit release verify accepts it for both architectures', async () => {
    const out = join(dir, 'b', '1.4.0')
    await releaseJson('pack', ['--version', '1.4.0', '--input', join(dir, 'dist'), '--output', out])
    // The documented recipe: openssl pkeyutl -sign -rawin, then base64 on one line.
    const sig = (
      await run('openssl', ['pkeyutl', '-sign', '-rawin', '-inkey', keys.key, '-in', join(out, 'SHA256SUMS')])
    ).stdoutBytes
    await writeFile(join(out, 'SHA256SUMS.sig'), sig.toString('base64'))
    for (const arch of ['amd64', 'arm64']) {
      const verified = await releaseJson('verify', [
        '--dir',
        out,
        '--version',
        '1.4.0',
        '--arch',
        arch,
        '--public-key',
        keys.raw,
      ])
      assert.equal(verified.code, 0, verified.stdout)
      const result = verified.json.result as {
        archive: string
        entry: { name: string; mode: string; uid: number; gid: number }
      }
      assert.equal(result.archive, `fleetkit-agent-1.4.0-linux-${arch}.tar.zst`)
      assert.deepEqual(
        { ...result.entry, size: undefined },
        { name: 'fleetkit-agent', mode: '0755', uid: 0, gid: 0, size: undefined },
      )
    }
    const refused = await releaseJson('verify', [
      '--dir',
      out,
      '--version',
      '1.4.0',
      '--arch',
      'amd64',
      '--public-key',
      foreign.raw,
    ])
    assert.equal(refused.code, 13)
    assert.equal(refused.json.code, 'RELEASE_SIGNATURE_INVALID')
  })
})
