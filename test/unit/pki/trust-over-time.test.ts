import assert from 'node:assert/strict'
import { createPrivateKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto'

import { planRotationAbort, planRotationBegin, planRotationCompletion, signedBy } from '../../../src/pki/ca-rotation.js'
import { createCertificateAuthority, loadIssuingCa } from '../../../src/pki/certificate-authority.js'
import { issueClientCertificate } from '../../../src/pki/client-certificate.js'
import { generateP256KeyPair, privateKeyToPem } from '../../../src/pki/keys.js'
import {
  challengeSignedBy,
  CHALLENGE_LIFETIME_MS,
  issueChallenge,
  readChallenge,
} from '../../../src/pki/recovery-challenge.js'
import { recoverySignedBytes } from '../../../src/pki/recovery-signature.js'
import { issueServerCertificate, serverCertificateNames } from '../../../src/pki/server-certificate.js'
import { bundleFingerprints, buildTrustBundle } from '../../../src/pki/trust-bundle.js'
import { readHeartbeatResponse } from '../../../src/protocol/agent-routes.js'

const NOW = new Date('2026-06-01T12:00:00Z')

async function pkiFiles() {
  const created = await createCertificateAuthority({ now: NOW })
  const ca = await loadIssuingCa(created.certificatePem, created.privateKeyPem)
  const serverKeys = await generateP256KeyPair()
  const server = await issueServerCertificate({
    ca,
    publicKey: serverKeys.publicKey,
    names: ['gw.test', '127.0.0.1'],
    now: NOW,
  })
  return {
    caCertificate: created.certificatePem,
    caKey: created.privateKeyPem,
    bundle: buildTrustBundle([created.certificatePem]),
    serverCertificate: server.certificatePem,
    serverKey: await privateKeyToPem(serverKeys.privateKey),
  }
}

describe('pki: rotation phases (pure)', () => {
  it('begin archives the CA first and renames the new certificate last; the bundle trusts new then old', async () => {
    const files = await pkiFiles()
    const plan = await planRotationBegin(files, NOW)
    assert.deepEqual(
      plan.files.map((f) => f.name),
      ['ca.pem.previous', 'ca.key.previous', 'ca-bundle.pem.previous', 'ca-bundle.pem', 'ca.key', 'ca.pem'],
    )
    assert.equal(plan.files.find((f) => f.name === 'ca.key.previous')!.mode, 0o600)
    assert.equal(plan.files.find((f) => f.name === 'ca.key.previous')!.content, files.caKey)
    assert.deepEqual(bundleFingerprints(plan.files.find((f) => f.name === 'ca-bundle.pem')!.content), [
      plan.newCaSha256,
      plan.oldCaSha256,
    ])
    const archived = { caCertificate: files.caCertificate, caKey: files.caKey, bundle: files.bundle }
    assert.deepEqual(
      planRotationAbort(archived).map((f) => [f.name, f.content]),
      [
        ['ca-bundle.pem', files.bundle],
        ['ca.key', files.caKey],
        ['ca.pem', files.caCertificate],
      ],
    )
  })

  it('completion re-signs the server certificate by the new CA with the same names and key, and trusts the new CA only; then nothing is left to do', async () => {
    const files = await pkiFiles()
    const plan = await planRotationBegin(files, NOW)
    const after = Object.fromEntries(plan.files.map((f) => [f.name, f.content]))
    const rotated = {
      ...files,
      caCertificate: after['ca.pem']!,
      caKey: after['ca.key']!,
      bundle: after['ca-bundle.pem']!,
    }
    const completion = await planRotationCompletion(rotated, NOW)
    assert.deepEqual(
      completion.map((f) => f.name),
      ['server.pem', 'ca-bundle.pem'],
    )
    const server = completion[0]!.content
    assert.ok(signedBy(server, rotated.caCertificate))
    assert.ok(!signedBy(server, files.caCertificate))
    assert.deepEqual(serverCertificateNames(server), ['gw.test', '127.0.0.1'])
    const { X509Certificate, createPrivateKey } = await import('node:crypto')
    assert.ok(new X509Certificate(server).checkPrivateKey(createPrivateKey(files.serverKey)), 'the same key')
    assert.deepEqual(bundleFingerprints(completion[1]!.content), [plan.newCaSha256])
    const finished = { ...rotated, serverCertificate: server, bundle: completion[1]!.content }
    assert.deepEqual(await planRotationCompletion(finished, NOW), [])
  })
})

describe('pki: recovery challenges', () => {
  const serverKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ format: 'pem', type: 'pkcs8' })
    .toString()
  const otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ format: 'pem', type: 'pkcs8' })
    .toString()

  it('reads back what it issued (node, counter) until it expires; a forged, edited or foreign challenge reads as nothing', () => {
    const { challenge, expiresAt } = issueChallenge(serverKey, { nodeId: 'node-1', counter: 3, now: NOW })
    assert.equal(expiresAt.getTime(), NOW.getTime() + CHALLENGE_LIFETIME_MS)
    assert.deepEqual(readChallenge(serverKey, challenge, NOW), { nodeId: 'node-1', counter: 3, expiresAt })
    assert.equal(readChallenge(serverKey, challenge, new Date(expiresAt.getTime() + 1)), undefined, 'expired')
    assert.equal(readChallenge(otherKey, challenge, NOW), undefined, 'another gateway key')
    const parts = challenge.split('.')
    parts[2] = '4'
    assert.equal(readChallenge(serverKey, parts.join('.'), NOW), undefined, 'counter edited')
    assert.equal(readChallenge(serverKey, 'v1.x.0.1.2.3', NOW), undefined)
    assert.notEqual(
      issueChallenge(serverKey, { nodeId: 'node-1', counter: 3, now: NOW }).challenge,
      challenge,
      'a fresh nonce each time',
    )
  })

  it('accepts a signature by the certificate key only, over the challenge and the CSR it asks for', async () => {
    const created = await createCertificateAuthority({ now: NOW })
    const ca = await loadIssuingCa(created.certificatePem, created.privateKeyPem)
    const node = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const { x509 } = await import('../../../src/pki/x509-provider.js')
    const spki = node.publicKey.export({ format: 'der', type: 'spki' })
    const cert = await issueClientCertificate({
      ca,
      subjectPublicKey: new x509.PublicKey(Uint8Array.from(spki).buffer),
      nodeId: 'node-1',
      now: NOW,
      lifetimeSeconds: 60,
    })
    const { challenge } = issueChallenge(serverKey, { nodeId: 'node-1', counter: 0, now: NOW })
    const signed = (csr: string, version: 1 | 2) => recoverySignedBytes(challenge, csr, version)
    const signature = (bytes: Buffer, key: KeyObject) =>
      sign('sha256', bytes, { key, dsaEncoding: 'der' }).toString('base64')
    const good = signature(signed('CSR A', 2), node.privateKey)
    assert.equal(challengeSignedBy(cert.certificatePem, signed('CSR A', 2), good), true)
    assert.equal(challengeSignedBy(cert.certificatePem, signed('CSR B', 2), good), false, 'another CSR')
    assert.equal(challengeSignedBy(cert.certificatePem, signed('CSR A', 1), good), false, 'the challenge alone')
    assert.equal(
      challengeSignedBy(
        cert.certificatePem,
        signed('CSR A', 2),
        signature(signed('CSR A', 2), createPrivateKey(otherKey)),
      ),
      false,
    )
    assert.equal(
      challengeSignedBy(cert.certificatePem, recoverySignedBytes(`${challenge}x`, 'CSR A', 2), good),
      false,
      'another challenge',
    )
    assert.equal(challengeSignedBy(cert.certificatePem, signed('CSR A', 2), 'AAAA'), false)
    // Version 1 (agents before 2): the challenge's bytes alone, whatever the CSR.
    const old = signature(Buffer.from(challenge, 'utf8'), node.privateKey)
    assert.equal(challengeSignedBy(cert.certificatePem, signed('any CSR', 1), old), true)
  })
})

describe('protocol: heartbeat renewal_due', () => {
  it('is true only when the gateway says so, absent otherwise, and must be a boolean', () => {
    assert.deepEqual(readHeartbeatResponse({ node_status: 'active' }), { node_status: 'active' })
    assert.deepEqual(readHeartbeatResponse({ node_status: 'active', renewal_due: true }), {
      node_status: 'active',
      renewal_due: true,
    })
    assert.deepEqual(readHeartbeatResponse({ node_status: 'active', renewal_due: false }), { node_status: 'active' })
    assert.throws(() => readHeartbeatResponse({ node_status: 'active', renewal_due: 'yes' }), /renewal_due/)
    assert.equal(
      readHeartbeatResponse({ node_status: 'active', trust_bundle_sha256: 'a'.repeat(64) }).trust_bundle_sha256,
      'a'.repeat(64),
    )
    assert.throws(
      () => readHeartbeatResponse({ node_status: 'active', trust_bundle_sha256: 'x' }),
      /trust_bundle_sha256/,
    )
  })

  it('the bundle digest ignores order and PEM layout, and changes with the set of CAs', async () => {
    const { trustBundleDigest } = await import('../../../src/pki/trust-bundle-digest.js')
    const one = (await createCertificateAuthority({ now: NOW })).certificatePem
    const two = (await createCertificateAuthority({ now: NOW })).certificatePem
    assert.equal(trustBundleDigest(one + two), trustBundleDigest(`${two}\r\n${one}`))
    assert.notEqual(trustBundleDigest(one + two), trustBundleDigest(one))
  })
})
