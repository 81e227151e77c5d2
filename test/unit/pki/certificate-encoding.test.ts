// The client certificate written in DER by hand (src/pki/der.ts) and the CSR read by the strict reader
// (src/pki/der-reader.ts): the to-be-signed part is byte for byte what @peculiar/x509's generator writes for the
// same inputs, OpenSSL reads and verifies it, and requests made by OpenSSL itself (P-256 and P-384, SHA-256 and
// SHA-384, UTF8String names) are read as the agent's are; malformed DER is refused, never thrown.
import assert from 'node:assert/strict'
import { X509Certificate } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { authorityKeyIdentifier } from '../../../src/pki/certificate-authority.js'
import { issueClientCertificate } from '../../../src/pki/client-certificate.js'
import { checkCertificateRequest } from '../../../src/pki/csr.js'
import { certificateTime, objectIdentifier, unsignedInteger } from '../../../src/pki/der.js'
import { children, readOne } from '../../../src/pki/der-reader.js'
import { SIGNING_ALGORITHM } from '../../../src/pki/keys.js'
import { pemBlocks } from '../../../src/pki/pem.js'
import { x509 } from '../../../src/pki/x509-provider.js'
import { ephemeralCa, issuedNodeCertificate, makeCsr, nodeKey, run } from '../../support/pki.js'

const NOW = new Date('2026-03-01T12:00:00.400Z')
const derOf = (pem: string) => pemBlocks(pem)[0]!.der
const tbsOf = (der: Buffer) => children(readOne(der))[0]!.der

describe('pki: the client certificate in DER', () => {
  it("writes the to-be-signed part byte for byte as @peculiar/x509's generator does", async () => {
    const ca = await ephemeralCa(NOW)
    const key = await nodeKey()
    const check = await checkCertificateRequest(await makeCsr(key, { name: 'CN=node-7' }), 'node-7')
    assert.ok(check.ok)
    for (const [nodeId, lifetimeSeconds] of [
      ['node-7', 3600],
      ['app-1-r2', 86_400 * 400],
      // After 2049 a time is a GeneralizedTime (RFC 5280 4.1.2.5).
      ['db.eu-1', 86_400 * 365 * 30],
    ] as const) {
      const issued = await issueClientCertificate({
        ca,
        subjectPublicKey: check.publicKey,
        nodeId,
        now: NOW,
        lifetimeSeconds,
      })
      const theirs = await x509.X509CertificateGenerator.create({
        serialNumber: issued.serial,
        subject: [{ CN: [nodeId] }],
        issuer: ca.certificate.subjectName,
        notBefore: issued.notBefore,
        notAfter: issued.notAfter,
        publicKey: new x509.PublicKey(check.publicKey.rawData),
        signingKey: ca.signingKey,
        signingAlgorithm: SIGNING_ALGORITHM,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
          new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth], false),
          new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: nodeId }], false),
          await authorityKeyIdentifier(ca),
        ],
      })
      const ours = derOf(issued.certificatePem)
      assert.equal(tbsOf(ours).toString('hex'), tbsOf(Buffer.from(theirs.rawData)).toString('hex'), nodeId)
      const node = new X509Certificate(issued.certificatePem)
      assert.equal(node.verify(new X509Certificate(ca.certificatePem).publicKey), true)
      assert.equal(node.checkPrivateKey((await import('node:crypto')).createPrivateKey(key.privateKeyPem)), true)
      assert.match(
        issued.certificatePem,
        /^-----BEGIN CERTIFICATE-----\n(?:[A-Za-z0-9+/=]{64}\n)*[A-Za-z0-9+/=]{1,64}\n-----END CERTIFICATE-----\n$/,
      )
    }
  })

  it('is read and verified by openssl as a client certificate of the CA', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleetkit-der-'))
    try {
      const ca = await ephemeralCa(new Date())
      const { issued } = await issuedNodeCertificate(ca, 'node-9', { lifetimeSeconds: 600 })
      await writeFile(join(dir, 'ca.pem'), ca.certificatePem)
      await writeFile(join(dir, 'node.pem'), issued.certificatePem)
      const verified = await run('openssl', ['verify', '-purpose', 'sslclient', '-CAfile', 'ca.pem', 'node.pem'], {
        cwd: dir,
      })
      assert.match(verified.stdout, /node\.pem: OK/)
      const text = (await run('openssl', ['x509', '-in', 'node.pem', '-noout', '-text'], { cwd: dir })).stdout
      assert.match(text, /Subject: CN ?= ?node-9/)
      assert.match(text, /DNS:node-9/)
      assert.match(text, /CA:FALSE/)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('encodes integers, OIDs and times as X.690 asks', () => {
    assert.equal(unsignedInteger('7f').toString('hex'), '02017f')
    assert.equal(unsignedInteger('80').toString('hex'), '02020080')
    assert.equal(unsignedInteger('0001').toString('hex'), '020101')
    assert.equal(objectIdentifier('1.2.840.10045.4.3.2').toString('hex'), '06082a8648ce3d040302')
    assert.equal(certificateTime(new Date('2049-12-31T23:59:59Z')).toString('latin1').slice(2), '491231235959Z')
    assert.equal(certificateTime(new Date('2050-01-01T00:00:00Z')).toString('latin1').slice(2), '20500101000000Z')
  })
})

describe('pki: CSRs read by the strict DER reader', () => {
  let dir: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-csr-'))
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  let made = 0
  /** A request made by OpenSSL itself: its default string mask writes the CN as a UTF8String. */
  async function opensslCsr(keyArgs: string[], digest: string, subject: string, san?: string): Promise<string> {
    const keyFile = join(dir, `key-${++made}.pem`)
    await run('openssl', ['genpkey', ...keyArgs, '-out', keyFile])
    const out = join(dir, `req-${++made}.pem`)
    await run('openssl', [
      'req',
      '-new',
      '-key',
      keyFile,
      `-${digest}`,
      '-subj',
      subject,
      ...(san ? ['-addext', `subjectAltName=${san}`] : []),
      '-out',
      out,
    ])
    return readFile(out, 'utf8')
  }
  const P256 = ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']
  const P384 = ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384']

  it("accepts OpenSSL's requests on P-256 and P-384, SHA-256 and SHA-384, with and without a SAN", async () => {
    for (const [key, digest, san] of [
      [P256, 'sha256', undefined],
      [P384, 'sha384', 'DNS:node-1'],
      [P256, 'sha384', 'DNS:node-1'],
    ] as const) {
      const check = await checkCertificateRequest(await opensslCsr([...key], digest, '/CN=node-1', san), 'node-1')
      assert.ok(check.ok, `${key.join(' ')} ${digest}: ${check.ok ? '' : check.reason}`)
    }
  })

  it('refuses what the agent would never send, each with its reason', async () => {
    const cases: [string, Promise<string>, RegExp][] = [
      [
        'an RSA key',
        opensslCsr(['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'], 'sha256', '/CN=node-1'),
        /EC key on P-256 or P-384/,
      ],
      [
        'an Ed25519 key',
        opensslCsr(['-algorithm', 'ED25519'], 'sha256', '/CN=node-1').catch(() => ''),
        /EC key|does not parse|missing/,
      ],
      [
        'a P-521 key',
        opensslCsr(['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-521'], 'sha512', '/CN=node-1'),
        /EC key on P-256 or P-384/,
      ],
      ['a second subject attribute', opensslCsr([...P256], 'sha256', '/CN=node-1/O=evil'), /exactly CN=<node id>/],
      ['a SAN e-mail', opensslCsr([...P256], 'sha256', '/CN=node-1', 'email:a@b.example'), /only hold DNS names/],
      ['a SAN IP address', opensslCsr([...P256], 'sha256', '/CN=node-1', 'IP:10.0.0.1'), /only hold DNS names/],
    ]
    for (const [label, csr, reason] of cases) {
      const check = await checkCertificateRequest(await csr, 'node-1')
      assert.equal(check.ok, false, label)
      assert.match(check.ok ? '' : check.reason, reason, label)
    }
  })

  it('refuses malformed DER (BER lengths, trailing bytes, truncation, two blocks) without throwing', async () => {
    const good = derOf(await makeCsr(await nodeKey(), { name: 'CN=node-1' }))
    const pem = (der: Buffer) =>
      `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`
    // The outer length in long form with a leading zero octet: BER, not DER.
    const length = good.readUInt16BE(2)
    const berLength = Buffer.concat([Buffer.from([0x30, 0x83, 0x00, length >> 8, length & 0xff]), good.subarray(4)])
    for (const [label, input] of [
      ['a BER length', pem(berLength)],
      ['a trailing byte', pem(Buffer.concat([good, Buffer.from([0])]))],
      ['truncated', pem(good.subarray(0, good.length - 10))],
      ['two blocks', pem(good) + pem(good)],
      ['an indefinite length', pem(Buffer.concat([Buffer.from([0x30, 0x80]), good.subarray(4), Buffer.from([0, 0])]))],
    ] as const) {
      const check = await checkCertificateRequest(input, 'node-1')
      assert.equal(check.ok, false, label)
      assert.match(check.ok ? '' : check.reason, /does not parse as PKCS#10/, label)
    }
  })
})
