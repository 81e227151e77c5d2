import assert from 'node:assert/strict'
import { chmod, chown, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { loadPkiSet } from '../../../src/pki/pki-set.js'
import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { assertMatchesOutputSchema, type CliRun, runFleetkit } from '../../support/cli.js'
import { run } from '../../support/pki.js'

async function caInit(pkiDir: string, ...args: string[]): Promise<CliRun> {
  return runFleetkit(['ca', 'init', '--json', ...args], { env: { FLEETKIT_PKI_DIR: pkiDir } })
}

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => error instanceof FleetkitError && error.code === code)
}

describe('fleetkit ca init', function () {
  this.timeout(60_000)
  let dir: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-ca-'))
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('writes ca.pem, ca.key 0600, ca-bundle.pem, server.pem, server.key 0600; output matches the schema', async () => {
    const pkiDir = join(dir, 'pki')
    const { code, json } = await caInit(pkiDir, '--server-name', 'gw.test', '--server-name', '127.0.0.1')
    assert.equal(code, 0, JSON.stringify(json))
    assertMatchesOutputSchema('ca-init', json)
    const result = json.result as { serverNames: string[]; caFingerprintSha256: string }
    assert.deepEqual(result.serverNames, ['gw.test', '127.0.0.1'])
    assert.equal((await stat(join(pkiDir, 'ca.key'))).mode & 0o777, 0o600)
    assert.equal((await stat(join(pkiDir, 'server.key'))).mode & 0o777, 0o600)
    assert.equal((await stat(pkiDir)).mode & 0o777, 0o700)
    const { stdout } = await run('openssl', [
      'verify',
      '-CAfile',
      join(pkiDir, 'ca.pem'),
      '-purpose',
      'sslserver',
      join(pkiDir, 'server.pem'),
    ])
    assert.match(stdout, /OK/)
    const set = await loadPkiSet(pkiDir, new Date())
    assert.equal(set.ca.fingerprintSha256, result.caFingerprintSha256)
    assert.deepEqual(set.bundleFingerprints, [result.caFingerprintSha256])
  })

  it('refuses to overwrite an existing CA with CA_EXISTS (envelope matches the schema) and leaves it unchanged', async () => {
    const pkiDir = join(dir, 'pki')
    const before = await readFile(join(pkiDir, 'ca.key'), 'utf8')
    const { code, json } = await caInit(pkiDir)
    assert.notEqual(code, 0)
    assert.equal(json.code, 'CA_EXISTS')
    assertMatchesOutputSchema('ca-init', json)
    assert.equal(await readFile(join(pkiDir, 'ca.key'), 'utf8'), before)
  })

  it('refuses a group-readable CA key, a world-readable one, and one owned by another user (CA_KEY_PERMISSIONS)', async () => {
    const pkiDir = join(dir, 'pki')
    const key = join(pkiDir, 'ca.key')
    for (const mode of [0o640, 0o604, 0o660]) {
      await chmod(key, mode)
      await expectCode(loadPkiSet(pkiDir, new Date()), 'CA_KEY_PERMISSIONS')
    }
    await chmod(key, 0o600)
    await chown(key, 65534, 65534)
    await expectCode(loadPkiSet(pkiDir, new Date()), 'CA_KEY_PERMISSIONS')
    await chown(key, process.getuid!(), process.getgid!())
    await loadPkiSet(pkiDir, new Date())
  })

  it('reports CA_MISSING for an empty directory and PKI_INVALID for a CA key that does not belong to the certificate', async () => {
    await expectCode(loadPkiSet(join(dir, 'nothing-here'), new Date()), 'CA_MISSING')
    const other = join(dir, 'other')
    assert.equal((await caInit(other)).code, 0)
    await writeFile(join(dir, 'pki', 'ca.key'), await readFile(join(other, 'ca.key'), 'utf8'), { mode: 0o600 })
    await expectCode(loadPkiSet(join(dir, 'pki'), new Date()), 'PKI_INVALID')
  })
})
