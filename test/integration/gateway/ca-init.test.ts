import assert from 'node:assert/strict'
import { chmod, chown, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { withPkiLock } from '../../../src/pki/pki-lock.js'
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

  it('two operators at once: of four concurrent ca init one writes a whole set, the others get CA_EXISTS', async () => {
    const pkiDir = join(dir, 'raced')
    const runs = await Promise.all([1, 2, 3, 4].map(() => caInit(pkiDir)))
    const codes = runs.map((r) => (r.code === 0 ? 'ok' : (r.json.code as string))).sort()
    assert.deepEqual(codes, ['CA_EXISTS', 'CA_EXISTS', 'CA_EXISTS', 'ok'], runs.map((r) => r.stderr).join('\n'))
    const winner = runs.find((r) => r.code === 0)!.json.result as { caFingerprintSha256: string }
    // The set is one run's: the key belongs to the certificate, the server certificate to the CA.
    const set = await loadPkiSet(pkiDir, new Date())
    assert.equal(set.ca.fingerprintSha256, winner.caFingerprintSha256)
    assert.deepEqual((await readdir(pkiDir)).sort(), ['ca-bundle.pem', 'ca.key', 'ca.pem', 'server.key', 'server.pem'])
  })

  it('a PKI command waits for another holding the directory, and gives up with PKI_BUSY changing nothing', async () => {
    const pkiDir = join(dir, 'raced')
    const before = await readFile(join(pkiDir, 'server.pem'), 'utf8')
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let holding!: () => void
    const taken = new Promise<void>((resolve) => (holding = resolve))
    const holder = withPkiLock(pkiDir, async () => {
      holding()
      await held
    })
    await taken
    try {
      await assert.rejects(
        withPkiLock(pkiDir, async () => assert.fail('ran while the lock was held'), { timeoutMs: 200 }),
        (error: unknown) =>
          error instanceof FleetkitError &&
          error.code === 'PKI_BUSY' &&
          // The way out when the holder is not fleetkit at all (a PID an older fleetkit's lock names, reused).
          error.actions.includes(
            `if PID ${process.pid} is not a fleetkit command (ps -p ${process.pid} -o args), remove ${join(pkiDir, '.pki.lock')}`,
          ),
      )
      // A whole command waits: it finishes once the holder is done.
      const waiting = runFleetkit(['ca', 'server-cert', '--server-name', 'gw2.test', '--json'], {
        env: { FLEETKIT_PKI_DIR: pkiDir },
      })
      await new Promise((resolve) => setTimeout(resolve, 1500))
      assert.equal(await readFile(join(pkiDir, 'server.pem'), 'utf8'), before, 'nothing written while held')
      release()
      const done = await waiting
      assert.equal(done.code, 0, done.stdout + done.stderr)
      assert.deepEqual(done.json.result.serverNames, ['gw2.test'])
    } finally {
      release()
      await holder
    }
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

  it('makes a state directory that does not exist yet listable by nobody else and passable (0711), the PKI 0700', async () => {
    const pkiDir = join(dir, 'fresh', 'state', 'pki')
    assert.equal((await caInit(pkiDir, '--server-name', 'gw.test')).code, 0)
    assert.equal((await stat(pkiDir)).mode & 0o777, 0o700)
    for (const parent of [join(dir, 'fresh'), join(dir, 'fresh', 'state')])
      assert.equal((await stat(parent)).mode & 0o777, 0o711, parent)
  })
})
