// `ca rotate` run again after a kill between the archive's file operations: a begin renames the three
// archive files in one by one, an abort and a completion unlink them one by one. Each test leaves the
// files such a kill leaves (strace -e inject=rename,unlink:signal=KILL found each point), then runs the
// same phase again: it finishes the files; a partial archive no killed run explains stays PKI_INVALID,
// naming each file and what it holds.
import assert from 'node:assert/strict'
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { type FleetkitError, toFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { fixedClock } from '../../../src/config/clock.js'
import { rotateCa, type RotatePhase } from '../../../src/lifecycle/ca/ca-rotation.js'
import { certificateFingerprintSha256 } from '../../../src/pki/fingerprint.js'
import { initPki } from '../../../src/pki/init-pki.js'
import { bundleFingerprints } from '../../../src/pki/trust-bundle.js'
import { latestRotation } from '../../../src/store/pki/ca-rotations.js'
import { freshDatabasePerTest } from '../../support/postgres.js'

const ARCHIVE = ['ca-bundle.pem.previous', 'ca.key.previous', 'ca.pem.previous']

describe('ca rotate after a kill between the archive file operations', function () {
  this.timeout(120_000)
  const db = freshDatabasePerTest()
  let dir: string
  let pkiDir: string
  const clock = fixedClock(new Date())
  const rotate = (phase: RotatePhase) => rotateCa({ pool: db().pool, phase, pkiDir, clock })
  const refused = (phase: RotatePhase): Promise<FleetkitError> =>
    rotate(phase).then(
      (r) => assert.fail(`--${phase} succeeded: ${JSON.stringify(r)}`),
      (error: unknown) => toFleetkitError(error),
    )
  const archive = async () => (await readdir(pkiDir)).filter((n) => n.endsWith('.previous')).sort()
  const caSha = async (name = 'ca.pem') => certificateFingerprintSha256(await readFile(join(pkiDir, name), 'utf8'))

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-rotate-killed-'))
    pkiDir = join(dir, 'pki')
    await initPki({ pkiDir, now: clock.now() })
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  for (const left of [['ca.pem'], ['ca.pem', 'ca.key']]) {
    it(`--begin killed after renaming in ${left.map((n) => `${n}.previous`).join(' and ')}: --begin again begins`, async () => {
      const oldSha = await caSha()
      // The archive is renamed in first, copies of the current files; the transaction never committed.
      for (const name of left) await copyFile(join(pkiDir, name), join(pkiDir, `${name}.previous`))
      const begun = await rotate('begin')
      assert.equal(begun.rotation.state, 'begun')
      assert.equal(begun.rotation.oldCaSha256, oldSha)
      assert.deepEqual(await archive(), ARCHIVE, 'a whole archive of the old CA')
      assert.equal(await caSha('ca.pem.previous'), oldSha)
      assert.equal((await latestRotation(db().pool))?.status, 'begun')
    })
  }

  for (const left of [['ca.pem.previous', 'ca-bundle.pem.previous'], ['ca-bundle.pem.previous']]) {
    it(`--complete killed with ${left.join(' and ')} left: --complete again finishes, then has nothing to do`, async () => {
      const oldSha = await caSha()
      const begun = await rotate('begin')
      const kept = new Map<string, Buffer>()
      for (const name of left) kept.set(name, await readFile(join(pkiDir, name)))
      const done = await rotate('complete')
      assert.equal(done.rotation.state, 'completed')
      // The state committed and ca.key.previous was unlinked first: what is left is the old CA's public part.
      for (const [name, bytes] of kept) await writeFile(join(pkiDir, name), bytes)
      const again = await rotate('complete')
      assert.equal(again.resumed, true)
      assert.deepEqual(await archive(), [])
      assert.deepEqual(bundleFingerprints(await readFile(join(pkiDir, 'ca-bundle.pem'), 'utf8')), [
        begun.rotation.newCaSha256,
      ])
      assert.equal((await refused('complete')).code, 'CA_ROTATION_NOT_STARTED', 'nothing left to finish')
      // A --begin after the same kill is not blocked either.
      for (const [name, bytes] of kept) await writeFile(join(pkiDir, name), bytes)
      const next = await rotate('begin')
      assert.equal(next.rotation.oldCaSha256, begun.rotation.newCaSha256)
      assert.notEqual(await caSha('ca.pem.previous'), oldSha, 'the archive is the CA that was current')
    })
  }

  it('--abort killed between its unlinks: --abort again finishes it', async () => {
    const oldSha = await caSha()
    await rotate('begin')
    const kept = await readFile(join(pkiDir, 'ca-bundle.pem.previous'))
    await rotate('abort')
    await writeFile(join(pkiDir, 'ca-bundle.pem.previous'), kept)
    const again = await rotate('abort')
    assert.equal(again.resumed, true)
    assert.equal(again.rotation.state, 'aborted')
    assert.deepEqual(again.filesWritten, [])
    assert.deepEqual(await archive(), [])
    assert.equal(await caSha(), oldSha)
    assert.equal((await refused('abort')).code, 'CA_ROTATION_NOT_STARTED', 'nothing left to finish')
  })

  it('a partial archive no killed run leaves is PKI_INVALID naming each file and what it holds; nothing is removed', async () => {
    const other = join(dir, 'other')
    await initPki({ pkiDir: other, now: clock.now() })
    const otherSha = certificateFingerprintSha256(await readFile(join(other, 'ca.pem'), 'utf8'))
    await copyFile(join(other, 'ca.pem'), join(pkiDir, 'ca.pem.previous'))
    const error = await refused('begin')
    assert.equal(error.code, 'PKI_INVALID')
    assert.match(
      error.message,
      new RegExp(
        `${pkiDir}/ca\\.pem\\.previous is the certificate of CA ${otherSha.slice(0, 16)}…, not the current CA ${(await caSha()).slice(0, 16)}…`,
      ),
    )
    assert.match(error.message, /missing ca\.key\.previous, ca-bundle\.pem\.previous/)
    assert.deepEqual(error.data?.present, ['ca.pem.previous'])
    assert.ok(error.actions.includes(`openssl x509 -in ${pkiDir}/ca.pem.previous -noout -subject -fingerprint -sha256`))
    assert.deepEqual(await archive(), ['ca.pem.previous'])
    assert.equal((await latestRotation(db().pool))?.status, undefined, 'nothing recorded')
  })

  it('after a completed rotation, an archived key is never taken for a completion leftover (it goes first)', async () => {
    await rotate('begin')
    const key = await readFile(join(pkiDir, 'ca.key.previous'))
    const bundle = await readFile(join(pkiDir, 'ca-bundle.pem.previous'))
    await rotate('complete')
    await writeFile(join(pkiDir, 'ca.key.previous'), key, { mode: 0o600 })
    await writeFile(join(pkiDir, 'ca-bundle.pem.previous'), bundle)
    const error = await refused('complete')
    assert.equal(error.code, 'PKI_INVALID')
    assert.match(error.message, /ca\.key\.previous is a private key that is not the current CA's \(ca\.key\)/)
    assert.deepEqual(await archive(), ['ca-bundle.pem.previous', 'ca.key.previous'], 'the key is still there')
  })
})
