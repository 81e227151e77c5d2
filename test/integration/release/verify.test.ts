import assert from 'node:assert/strict'
import { readFile, mkdtemp, rm, writeFile, mkdir, cp } from 'node:fs/promises'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, normalize } from 'node:path'

import { fakeAgent, opensslKeyPair, releaseJson, run } from './release-cli.js'

/** Rewrites SHA256SUMS for the archives in DIR and signs it with openssl, so only the archive is wrong. */
async function resumAndSign(dir: string, key: string): Promise<void> {
  await run('bash', ['-c', 'cd "$1" && sha256sum fleetkit-agent-*.tar.zst > SHA256SUMS', '-', dir])
  const sig = (await run('openssl', ['pkeyutl', '-sign', '-rawin', '-inkey', key, '-in', join(dir, 'SHA256SUMS')]))
    .stdoutBytes
  await writeFile(join(dir, 'SHA256SUMS.sig'), `${sig.toString('base64')}\n`)
}

describe('fleetkit release verify', function () {
  this.timeout(60_000)
  let dir: string
  let good: string
  let keys: { key: string; pub: string; raw: string }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-release-verify-'))
    keys = await opensslKeyPair(dir, 'release')
    await fakeAgent(join(dir, 'dist'), 'amd64', '5.0.0')
    good = join(dir, 'www', 'fleetkit', '5.0.0')
    await releaseJson('pack', ['--version', '5.0.0', '--input', join(dir, 'dist'), '--output', good])
    await releaseJson('sign', ['--key', keys.key, '--dir', good])
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  async function copyOfGood(name: string): Promise<string> {
    const copy = join(dir, name)
    await cp(good, copy, { recursive: true })
    return copy
  }

  function verify(releaseDir: string, extra: string[] = []) {
    return releaseJson('verify', [
      '--dir',
      releaseDir,
      '--version',
      '5.0.0',
      '--arch',
      'amd64',
      '--public-key',
      keys.raw,
      ...extra,
    ])
  }

  it('accepts a good release and reports what it checked', async () => {
    const ok = await verify(good)
    assert.equal(ok.code, 0, ok.stdout)
    const result = ok.json.result as { sha256: string; archive: string }
    const sums = await readFile(join(good, 'SHA256SUMS'), 'utf8')
    assert.ok(sums.includes(`${result.sha256}  ${result.archive}\n`))
  })

  it('refuses a tampered archive with RELEASE_CHECKSUM_MISMATCH', async () => {
    const copy = await copyOfGood('tampered')
    const archive = join(copy, 'fleetkit-agent-5.0.0-linux-amd64.tar.zst')
    const bytes = await readFile(archive)
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff
    await writeFile(archive, bytes)
    const refused = await verify(copy)
    assert.equal(refused.code, 14)
    assert.equal(refused.json.code, 'RELEASE_CHECKSUM_MISMATCH')
  })

  it('refuses a signed archive holding a symlink with RELEASE_ARCHIVE_UNSAFE', async () => {
    const copy = await copyOfGood('symlink')
    await mkdir(join(dir, 'evil'))
    await run('ln', ['-s', '/bin/sh', join(dir, 'evil', 'fleetkit-agent')])
    await run('bash', [
      '-c',
      'cd "$1" && tar -c --owner=0 --group=0 -f - fleetkit-agent | zstd -q -c > "$2"',
      '-',
      join(dir, 'evil'),
      join(copy, 'fleetkit-agent-5.0.0-linux-amd64.tar.zst'),
    ])
    await resumAndSign(copy, keys.key)
    const refused = await verify(copy)
    assert.equal(refused.code, 15)
    assert.equal(refused.json.code, 'RELEASE_ARCHIVE_UNSAFE')
  })

  it('refuses a version the signed sums do not list with RELEASE_VERSION_MISMATCH', async () => {
    const refused = await releaseJson('verify', [
      '--dir',
      good,
      '--version',
      '5.0.1',
      '--arch',
      'amd64',
      '--public-key',
      keys.raw,
    ])
    assert.equal(refused.code, 16)
    assert.equal(refused.json.code, 'RELEASE_VERSION_MISMATCH')
  })

  it('a release without a build for the architecture says so (RELEASE_VERSION_MISMATCH), not "another release"', async () => {
    // 5.0.0 was packed for amd64 only.
    const refused = await releaseJson('verify', [
      '--dir',
      good,
      '--version',
      '5.0.0',
      '--arch',
      'arm64',
      '--public-key',
      keys.raw,
    ])
    assert.equal(refused.code, 16)
    assert.equal(refused.json.code, 'RELEASE_VERSION_MISMATCH')
    assert.match(
      refused.json.message,
      /^release 5\.0\.0 has no build for arm64: the signed SHA256SUMS lists it for amd64 only/,
    )
    assert.doesNotMatch(refused.json.message, /is not release/)
    assert.match(
      refused.json.actions[0],
      /^fleetkit release pack --version NEW-VERSION --input DIR .*linux-arm64\/fleetkit-agent/,
    )
  })

  it('needs a public key, and refuses one that is not base64 of 32 bytes', async () => {
    const none = await releaseJson('verify', [
      '--dir',
      good,
      '--version',
      '5.0.0',
      '--arch',
      'amd64',
      '--definition',
      join(dir, 'no-fleet.yaml'),
    ])
    assert.equal(none.code, 10)
    assert.equal(none.json.code, 'RELEASE_INPUT_INVALID')
    const bad = await releaseJson('verify', [
      '--dir',
      good,
      '--version',
      '5.0.0',
      '--arch',
      'amd64',
      '--public-key',
      'AAAA',
    ])
    assert.equal(bad.code, 18)
    assert.equal(bad.json.code, 'RELEASE_KEY_INVALID')
  })

  it("takes the key from the definition's release.publicKey when --public-key is absent", async () => {
    // The example fleet with its documentation addresses swapped for private ones (a real fleet refuses the former).
    const example = await readFile(new URL('../../../examples/fleet.yaml', import.meta.url), 'utf8')
    const fleet = example
      .replace(/203\.0\.113\./g, '172.16.1.')
      .replace(/198\.51\.100\./g, '172.16.2.')
      .replace(/192\.0\.2\./g, '172.16.3.')
      .replace(/^(\s*publicKey:).*$/m, `$1 ${keys.raw}`)
    const definition = join(dir, 'fleet.yaml')
    await writeFile(definition, fleet)
    const ok = await releaseJson('verify', [
      '--dir',
      good,
      '--version',
      '5.0.0',
      '--arch',
      'amd64',
      '--definition',
      definition,
    ])
    assert.equal(ok.code, 0, ok.stdout)
    assert.equal((ok.json.result as { publicKey: string }).publicKey, keys.raw)
    const foreign = await opensslKeyPair(dir, 'foreign')
    await writeFile(definition, fleet.replace(keys.raw, foreign.raw))
    const refused = await releaseJson('verify', [
      '--dir',
      good,
      '--version',
      '5.0.0',
      '--arch',
      'amd64',
      '--definition',
      definition,
    ])
    assert.equal(refused.json.code, 'RELEASE_SIGNATURE_INVALID')
  })

  describe('over HTTPS', () => {
    let server: Server
    let baseUrl: string
    let caFile: string

    before(async () => {
      caFile = join(dir, 'server.pem')
      const keyFile = join(dir, 'server.key')
      await run('openssl', [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        keyFile,
        '-out',
        caFile,
      ])
      const root = join(dir, 'www')
      server = createServer({ key: await readFile(keyFile), cert: await readFile(caFile) }, (req, res) => {
        const path = normalize(join(root, decodeURIComponent(new URL(req.url ?? '/', 'https://x').pathname)))
        if (!path.startsWith(root)) {
          res.writeHead(403).end()
          return
        }
        readFile(path).then(
          (body) => res.writeHead(200, { 'content-length': body.length }).end(body),
          () => res.writeHead(404).end(),
        )
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      baseUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}/fleetkit`
    })
    after(async () => {
      await new Promise((resolve) => server.close(resolve))
    })

    it('reads <url>/<version>/ with --ca-file and accepts the release', async () => {
      const ok = await releaseJson('verify', [
        '--url',
        baseUrl,
        '--ca-file',
        caFile,
        '--version',
        '5.0.0',
        '--arch',
        'amd64',
        '--public-key',
        keys.raw,
      ])
      assert.equal(ok.code, 0, ok.stdout)
      assert.equal((ok.json.result as { source: string }).source, `${baseUrl}/5.0.0/`)
    })

    it('fails with RELEASE_DOWNLOAD_FAILED for an untrusted server, a missing version and an archive over --max-bytes', async () => {
      for (const args of [
        ['--url', baseUrl, '--version', '5.0.0'],
        ['--url', baseUrl, '--ca-file', caFile, '--version', '9.9.9'],
        ['--url', baseUrl, '--ca-file', caFile, '--version', '5.0.0', '--max-bytes', '16'],
      ]) {
        const refused = await releaseJson('verify', [...args, '--arch', 'amd64', '--public-key', keys.raw])
        assert.equal(refused.code, 12, refused.stdout)
        assert.equal(refused.json.code, 'RELEASE_DOWNLOAD_FAILED')
      }
    })

    it('refuses a URL that is not plain https', async () => {
      const refused = await releaseJson('verify', [
        '--url',
        baseUrl.replace('https:', 'http:'),
        '--version',
        '5.0.0',
        '--arch',
        'amd64',
        '--public-key',
        keys.raw,
      ])
      assert.equal(refused.code, 10)
      assert.equal(refused.json.code, 'RELEASE_INPUT_INVALID')
    })
  })
})
