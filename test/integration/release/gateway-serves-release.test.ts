// Releases without a mirror of your own (issue 38): `fleetkit release pack`, `release sign` (an openssl
// key), `release publish` into a real `fleetkit gateway serve`'s state directory, then fetched from the
// gateway's enrollment listener with nothing but the gateway CA: by curl (the signature verified by
// openssl), by the host verifier cloud-init/verify-release.sh, which installs it, and by `release verify --url`.
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { dump } from 'js-yaml'

import { packagePath } from '../../../src/package-root.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { validDefinition } from '../../support/definition-fixture.js'
import { startTestGateway, type TestGateway } from '../../support/gateway.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'
import { runProcess } from '../../support/process.js'
import { fakeAgent, opensslKeyPair, releaseJson, run } from './release-cli.js'

const V = '3.1.0'

describe('the gateway serves releases published into its state directory', function () {
  this.timeout(180_000)
  let postgres: DisposablePostgres
  let gw: TestGateway
  let dir: string
  let keys: { key: string; pub: string; raw: string }
  let releaseDir: string
  let definitionPath: string
  let caFile: string

  before(async () => {
    postgres = await startDisposablePostgres()
    // The real command: `fleetkit gateway serve` with FLEETKIT_STATE_DIR, as an operator runs it.
    gw = await startTestGateway({ postgresUrl: postgres.url, mode: 'process' })
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-gateway-release-'))
    keys = await opensslKeyPair(dir, 'release')
    for (const arch of ['amd64', 'arm64'] as const) await fakeAgent(join(dir, 'dist'), arch, V)
    releaseDir = join(dir, 'release', V)
    await releaseJson('pack', ['--version', V, '--input', join(dir, 'dist'), '--output', releaseDir])
    await releaseJson('sign', ['--key', keys.key, '--dir', releaseDir])
    // release.url is the gateway's enrollment URL itself, and no release.caFile.
    const definition = validDefinition()
    definition.gateway.enrollUrl = gw.enrollUrl
    definition.release = { url: gw.enrollUrl, publicKey: keys.raw, version: V }
    definitionPath = join(dir, 'fleet.yaml')
    await writeFile(definitionPath, dump(definition))
    caFile = join(gw.pkiDir, 'ca-bundle.pem')
    await mkdir(gw.stateDir, { recursive: true })
  })
  after(async () => {
    await gw?.close()
    await postgres?.stop()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  function publish(extra: string[] = []) {
    return runFleetkit([
      'release',
      'publish',
      '--dir',
      releaseDir,
      '--version',
      V,
      '--definition',
      definitionPath,
      '--state-dir',
      gw.stateDir,
      '--json',
      ...extra,
    ])
  }

  function curl(args: string[]) {
    return runProcess('curl', ['--silent', '--show-error', ...args])
  }

  it('publish verifies the release against release.publicKey and writes it to <state dir>/releases/<version>/', async () => {
    const published = await publish()
    assert.equal(published.code, 0, published.stderr)
    assertMatchesOutputSchema('release-publish', published.json)
    const result = published.json.result as { status: string; servedByGateway: boolean; url: string; dir: string }
    assert.equal(result.status, 'published')
    assert.equal(result.servedByGateway, true)
    assert.equal(result.url, `${gw.enrollUrl}/${V}/`)
    assert.equal(result.dir, join(gw.stateDir, 'releases', V))
    const again = await publish()
    assert.equal(again.code, 0, again.stderr)
    assert.equal((again.json.result as { status: string }).status, 'unchanged')
  })

  it('curl fetches the three files with the enrollment CA alone, and the signature verifies', async () => {
    const fetched = join(dir, 'fetched')
    await mkdir(fetched)
    const archive = `fleetkit-agent-${V}-linux-amd64.tar.zst`
    for (const name of ['SHA256SUMS', 'SHA256SUMS.sig', archive]) {
      const got = await curl([
        '--fail',
        '--proto',
        '=https',
        '--cacert',
        caFile,
        '-o',
        join(fetched, name),
        `${gw.enrollUrl}/${V}/${name}`,
      ])
      assert.equal(got.code, 0, `${name}: ${got.stderr}`)
      assert.ok((await readFile(join(fetched, name))).equals(await readFile(join(releaseDir, name))), name)
    }
    await writeFile(
      join(fetched, 'sig.bin'),
      Buffer.from((await readFile(join(fetched, 'SHA256SUMS.sig'), 'utf8')).trim(), 'base64'),
    )
    await run('openssl', [
      'pkeyutl',
      '-verify',
      '-rawin',
      '-pubin',
      '-inkey',
      keys.pub,
      '-sigfile',
      join(fetched, 'sig.bin'),
      '-in',
      join(fetched, 'SHA256SUMS'),
    ])
    await run('bash', ['-c', 'cd "$1" && grep -- "$2" SHA256SUMS | sha256sum -c --strict', '-', fetched, archive])
    // HEAD names the size; without the gateway CA the TLS handshake is refused (no system root trusts it).
    const head = await curl(['--fail', '--head', '--cacert', caFile, `${gw.enrollUrl}/${V}/${archive}`])
    assert.equal(head.code, 0, head.stderr)
    const size = (await stat(join(releaseDir, archive))).size
    assert.match(head.stdout, new RegExp(`content-length: ${size}\\r?\\n`, 'i'))
    assert.equal((await curl(['--fail', '-o', '/dev/null', `${gw.enrollUrl}/${V}/SHA256SUMS`])).code, 60)
  })

  it('the host verifier installs it from the gateway; an unpublished version or a traversal is a 404', async () => {
    await mkdir(join(dir, 'host', 'bin'), { recursive: true })
    const verifier = (version: string) =>
      runProcess('bash', [
        packagePath('cloud-init', 'verify-release.sh'),
        '--base-url',
        gw.enrollUrl,
        '--version',
        version,
        '--public-key',
        keys.pub,
        '--ca-file',
        caFile,
        '--arch',
        'arm64',
        '--target',
        join(dir, 'host', 'bin', 'fleetkit-agent'),
      ])
    const installed = await verifier(V)
    assert.equal(installed.code, 0, installed.stderr)
    assert.equal(installed.stdout.trim(), 'installed')
    assert.equal(
      (await runProcess(join(dir, 'host', 'bin', 'fleetkit-agent'), ['--version'])).stdout.trim(),
      `fleetkit-agent ${V}`,
    )
    const missing = await verifier('3.2.0')
    assert.equal(missing.code, 12, missing.stderr)
    assert.match(missing.stderr, /^RELEASE_DOWNLOAD_FAILED: /)
    for (const path of [`/${V}/../../pki/ca.key`, '/../state/releases', `/${V}/`, `/${V}/ca-bundle.pem`]) {
      const reply = await curl([
        '--path-as-is',
        '--cacert',
        caFile,
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        `${gw.enrollUrl}${path}`,
      ])
      assert.equal(reply.stdout, '404', path)
    }
  })

  it('fleetkit release verify --url reads it from the gateway as a host does', async () => {
    const checked = await releaseJson('verify', [
      '--url',
      gw.enrollUrl,
      '--ca-file',
      caFile,
      '--version',
      V,
      '--arch',
      'amd64',
      '--public-key',
      keys.raw,
    ])
    assert.equal(checked.code, 0, checked.stderr)
    assert.equal((checked.json.result as { source: string }).source, `${gw.enrollUrl}/${V}/`)
  })
})
