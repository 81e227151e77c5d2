// The issuance worker pool: CSR checks and signing happen in worker threads, the certificate is one
// openssl accepts, each CA in use is the one asked for (a rotation's new CA too), and a dead worker is replaced.
// Integration, not unit: every worker thread loads the signing code afresh (seconds each under tsx), and
// openssl runs; a pool starts its workers on first use, so a test that needs no pool starts none.
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { IssuancePool } from '../../../src/gateway/issuance/issuance-pool.js'
import { ephemeralCa, makeCsr, nodeKey, run, tamperSignature } from '../../support/pki.js'

describe('issuance worker pool', function () {
  this.timeout(60_000)
  let pool: IssuancePool
  let dir: string
  beforeEach(async () => {
    pool = new IssuancePool(2)
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-issuance-pool-'))
  })
  afterEach(async () => {
    await pool.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('checks a CSR and signs a client certificate in a worker thread; openssl verifies it as a client certificate of the CA', async () => {
    assert.equal(pool.started, 0, 'workers start on first use')
    const ca = await ephemeralCa()
    const checked = await pool.checkRequest(await makeCsr(await nodeKey(), { name: 'CN=node-w' }), 'node-w')
    assert.ok(checked.ok)
    assert.equal(pool.started, 1)
    const now = new Date()
    const issued = await pool.issue({
      ca,
      publicKeyDer: checked.publicKeyDer,
      nodeId: 'node-w',
      now,
      lifetimeSeconds: 3600,
    })
    assert.equal(issued.issuerCaSha256, ca.fingerprintSha256)
    assert.equal(issued.notAfter.getTime(), Math.floor(now.getTime() / 1000) * 1000 + 3600_000)
    await writeFile(join(dir, 'ca.pem'), ca.certificatePem)
    await writeFile(join(dir, 'cert.pem'), issued.certificatePem)
    const verified = await run('openssl', [
      'verify',
      '-purpose',
      'sslclient',
      '-CAfile',
      join(dir, 'ca.pem'),
      join(dir, 'cert.pem'),
    ])
    assert.match(verified.stdout, /cert\.pem: OK/)
    const text = (
      await run('openssl', [
        'x509',
        '-noout',
        '-subject',
        '-ext',
        'subjectAltName,extendedKeyUsage',
        '-in',
        join(dir, 'cert.pem'),
      ])
    ).stdout
    assert.match(text, /CN ?= ?node-w/)
    assert.match(text, /DNS:node-w/)
    assert.match(text, /TLS Web Client Authentication/)
  })

  it('refuses a CSR whose signature does not verify, or whose CN is another node, with the reason', async () => {
    const csr = await makeCsr(await nodeKey(), { name: 'CN=node-w' })
    assert.deepEqual(await pool.checkRequest(tamperSignature(csr), 'node-w'), {
      ok: false,
      reason: 'the request signature does not verify (no proof of possession)',
    })
    assert.deepEqual(await pool.checkRequest(csr, 'node-v'), {
      ok: false,
      reason: 'the subject must be exactly CN=<node id>',
    })
    assert.deepEqual(await pool.checkRequest(42, 'node-w'), { ok: false, reason: 'csr_pem is missing' })
  })

  it('signs with the CA each request names (two CAs during a rotation), many requests at once', async () => {
    const [oldCa, newCa] = [await ephemeralCa(), await ephemeralCa()]
    const checked = await pool.checkRequest(await makeCsr(await nodeKey(), { name: 'CN=node-r' }), 'node-r')
    assert.ok(checked.ok)
    const issued = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        pool.issue({
          ca: i % 2 ? newCa : oldCa,
          publicKeyDer: checked.publicKeyDer,
          nodeId: 'node-r',
          now: new Date(),
          lifetimeSeconds: 60,
        }),
      ),
    )
    issued.forEach((cert, i) => assert.equal(cert.issuerCaSha256, (i % 2 ? newCa : oldCa).fingerprintSha256))
    assert.equal(new Set(issued.map((c) => c.serial)).size, 12, 'every certificate has its own serial')
    assert.equal(pool.started, 2)
  })

  it('warm() loads one worker before any request', async () => {
    await pool.warm()
    assert.equal(pool.started, 1)
  })

  it('a worker that died is replaced; its pending request fails instead of hanging', async () => {
    const csr = await makeCsr(await nodeKey(), { name: 'CN=node-d' })
    const single = new IssuancePool(1)
    try {
      assert.ok((await single.checkRequest(csr, 'node-d')).ok)
      const slot = (single as unknown as { slots: { worker: { terminate(): Promise<number> } }[] }).slots[0]!
      // The worker is stopping when the request is sent: the request fails when it exits.
      const stopped = slot.worker.terminate()
      await assert.rejects(single.checkRequest(csr, 'node-d'), /issuance worker exited/)
      await stopped
      assert.ok((await single.checkRequest(csr, 'node-d')).ok, 'a new worker took its place')
      assert.equal(single.started, 1)
    } finally {
      await single.close()
    }
  })
})
