import assert from 'node:assert/strict'
import { X509Certificate } from 'node:crypto'

import { checkCertificateRequest } from '../../../src/pki/csr.js'
import { issueClientCertificate } from '../../../src/pki/client-certificate.js'
import { issueServerCertificate } from '../../../src/pki/server-certificate.js'
import { selfTestIssuingCa } from '../../../src/pki/certificate-authority.js'
import { buildTrustBundle, bundleFingerprints } from '../../../src/pki/trust-bundle.js'
import { certificateFingerprintSha256, derFingerprintSha256, fingerprint256Hex } from '../../../src/pki/fingerprint.js'
import { randomSerial } from '../../../src/pki/serial.js'
import { generateP256KeyPair } from '../../../src/pki/keys.js'
import { x509 } from '../../../src/pki/x509-provider.js'
import { ephemeralCa, makeCsr, nodeKey, tamperSignature } from '../../support/pki.js'

const NOW = new Date('2026-03-01T12:00:00.400Z')

describe('pki: CA', () => {
  it('creates a P-256 CA that is a CA, passes its self-test, and whose fingerprint is the SHA-256 of its DER', async () => {
    const ca = await ephemeralCa(NOW)
    const cert = new X509Certificate(ca.certificatePem)
    assert.equal(cert.ca, true)
    assert.equal(cert.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1')
    assert.equal(await selfTestIssuingCa(ca, NOW), true)
    assert.equal(ca.fingerprintSha256, derFingerprintSha256(cert.raw))
    assert.equal(cert.fingerprint256.replace(/:/g, '').toLowerCase(), ca.fingerprintSha256)
    // What the mTLS listener keys its certificate rows by (agent-auth.ts): the same fingerprint from OpenSSL's.
    assert.equal(fingerprint256Hex(cert.fingerprint256), ca.fingerprintSha256)
  })

  it('fails the self-test when the key belongs to another CA', async () => {
    const a = await ephemeralCa(NOW)
    const b = await ephemeralCa(NOW)
    assert.equal(await selfTestIssuingCa({ ...a, signingKey: b.signingKey }, NOW), false)
  })
})

describe('pki: CSR checks', () => {
  it('accepts CN=<node id> with no SAN or with SAN DNS = node id', async () => {
    const key = await nodeKey()
    assert.equal((await checkCertificateRequest(await makeCsr(key, { name: 'CN=node-1' }), 'node-1')).ok, true)
    assert.equal(
      (await checkCertificateRequest(await makeCsr(key, { name: 'CN=node-1', dnsNames: ['node-1'] }), 'node-1')).ok,
      true,
    )
  })

  it('refuses a CSR whose signature does not verify (no proof of possession)', async () => {
    const csr = tamperSignature(await makeCsr(await nodeKey(), { name: 'CN=node-1' }))
    const check = await checkCertificateRequest(csr, 'node-1')
    assert.equal(check.ok, false)
    assert.match(check.ok ? '' : check.reason, /signature/)
  })

  for (const [label, options] of [
    ['another CN', { name: 'CN=node-2' }],
    ['extra subject attributes', { name: 'CN=node-1, O=evil' }],
    ['a SAN DNS name for another host', { name: 'CN=node-1', dnsNames: ['node-1', 'gateway.example'] }],
    ['a SAN IP address', { name: 'CN=node-1', ipNames: ['10.0.0.1'] }],
  ] as const) {
    it(`refuses ${label}`, async () => {
      const check = await checkCertificateRequest(await makeCsr(await nodeKey(), options as never), 'node-1')
      assert.equal(check.ok, false)
    })
  }

  it('refuses garbage, empty and non-string input without throwing', async () => {
    for (const input of [
      '',
      'hello',
      '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n',
      42,
      undefined,
    ]) {
      assert.equal((await checkCertificateRequest(input, 'node-1')).ok, false)
    }
  })
})

describe('pki: client certificates', () => {
  it('issues CN and SAN = node id, clientAuth only, digitalSignature critical, not a CA, backdated 60 s, lifetime from the caller', async () => {
    const ca = await ephemeralCa(NOW)
    const key = await nodeKey()
    const check = await checkCertificateRequest(await makeCsr(key, { name: 'CN=node-7' }), 'node-7')
    assert.ok(check.ok)
    const issued = await issueClientCertificate({
      ca,
      subjectPublicKey: check.publicKey,
      nodeId: 'node-7',
      now: NOW,
      lifetimeSeconds: 3600,
    })
    const cert = new x509.X509Certificate(issued.certificatePem)
    assert.equal(cert.subject, 'CN=node-7')
    assert.equal(cert.notBefore.toISOString(), '2026-03-01T11:59:00.000Z')
    assert.equal(cert.notAfter.toISOString(), '2026-03-01T13:00:00.000Z')
    assert.deepEqual(issued.notBefore, cert.notBefore)
    assert.deepEqual(issued.notAfter, cert.notAfter)
    const san = new x509.SubjectAlternativeNameExtension(cert.getExtension('2.5.29.17')!.rawData)
    assert.deepEqual(san.names.toJSON(), [{ type: 'dns', value: 'node-7' }])
    const eku = new x509.ExtendedKeyUsageExtension(cert.getExtension('2.5.29.37')!.rawData)
    assert.deepEqual([...eku.usages], [x509.ExtendedKeyUsage.clientAuth])
    const ku = cert.getExtension('2.5.29.15')!
    assert.equal(ku.critical, true)
    assert.equal(new x509.KeyUsagesExtension(ku.rawData).usages, x509.KeyUsageFlags.digitalSignature)
    const bc = new x509.BasicConstraintsExtension(cert.getExtension('2.5.29.19')!.rawData)
    assert.equal(bc.ca, false)
    assert.equal(issued.issuerCaSha256, ca.fingerprintSha256)
    assert.equal(issued.fingerprintSha256, certificateFingerprintSha256(issued.certificatePem))
    assert.equal(issued.serial, cert.serialNumber.toLowerCase())
    const node = new X509Certificate(issued.certificatePem)
    assert.equal(node.verify(new X509Certificate(ca.certificatePem).publicKey), true)
    assert.equal(node.checkPrivateKey((await import('node:crypto')).createPrivateKey(key.privateKeyPem)), true)
  })

  it('draws a fresh random positive serial each time', async () => {
    const serials = new Set(Array.from({ length: 50 }, () => randomSerial()))
    assert.equal(serials.size, 50)
    for (const serial of serials) assert.match(serial, /^[4-7][0-9a-f]{31}$/)
    assert.equal(
      randomSerial(() => Buffer.alloc(16, 0xff)),
      '7f' + 'ff'.repeat(15),
    )
  })
})

describe('pki: server certificate and bundle', () => {
  it('carries DNS names and IP addresses, serverAuth, and verifies against the CA', async () => {
    const ca = await ephemeralCa(NOW)
    const keys = await generateP256KeyPair()
    const server = await issueServerCertificate({
      ca,
      publicKey: keys.publicKey,
      names: ['gw.example', '127.0.0.1', '::1'],
      now: NOW,
    })
    const cert = new X509Certificate(server.certificatePem)
    assert.equal(cert.subjectAltName, 'DNS:gw.example, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1')
    assert.equal(cert.checkHost('gw.example'), 'gw.example')
    assert.equal(cert.verify(new X509Certificate(ca.certificatePem).publicKey), true)
    await assert.rejects(issueServerCertificate({ ca, publicKey: keys.publicKey, names: ['bad name!'], now: NOW }))
  })

  it('builds a de-duplicated bundle in the given order', async () => {
    const a = await ephemeralCa(NOW)
    const b = await ephemeralCa(NOW)
    const bundle = buildTrustBundle([a.certificatePem, b.certificatePem, a.certificatePem])
    assert.deepEqual(bundleFingerprints(bundle), [a.fingerprintSha256, b.fingerprintSha256])
  })
})
