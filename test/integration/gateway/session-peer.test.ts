// The agent listener names a connection's client certificate by the SHA-256 of its DER, taken from the
// serialized TLS session rather than getPeerX509Certificate() (which re-decodes it, about 150 µs a
// connection): on real mTLS connections, TLS 1.2 and 1.3, full and resumed, the fast path finds the
// certificate and both ways give the fingerprint of the certificate the client presented.
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect, createServer, type Server, type TLSSocket } from 'node:tls'

import { peerFingerprint } from '../../../src/gateway/auth/agent-auth.js'
import { peerCertificateOfSession } from '../../../src/gateway/tls/session-peer.js'
import { loadIssuingCa } from '../../../src/pki/certificate-authority.js'
import { certificateFingerprintSha256, derFingerprintSha256, fingerprint256Hex } from '../../../src/pki/fingerprint.js'
import { initPki } from '../../../src/pki/init-pki.js'
import { issuedNodeCertificate } from '../../support/pki.js'

describe('gateway: the client certificate out of the TLS session', function () {
  this.timeout(60_000)
  let dir: string
  let server: Server
  let port: number
  let client: { key: string; cert: string; ca: string; fingerprint: string }
  /** What the server saw on each connection: both ways of naming the certificate, and whether it resumed. */
  const seen: { fast: string | undefined; slow: string; viaAuth: string | null; resumed: boolean }[] = []

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-session-peer-'))
    const now = new Date()
    await initPki({ pkiDir: dir, serverNames: ['localhost', '127.0.0.1'], now })
    const read = (name: string) => readFile(join(dir, name), 'utf8')
    const ca = await loadIssuingCa(await read('ca.pem'), await read('ca.key'))
    const { key, issued } = await issuedNodeCertificate(ca, 'node-1', { now })
    client = {
      key: key.privateKeyPem,
      cert: issued.certificatePem,
      ca: await read('ca-bundle.pem'),
      fingerprint: certificateFingerprintSha256(issued.certificatePem),
    }
    server = createServer(
      {
        key: await read('server.key'),
        cert: await read('server.pem'),
        ca: client.ca,
        requestCert: true,
        rejectUnauthorized: true,
        minVersion: 'TLSv1.2',
      },
      (socket: TLSSocket) => {
        const session = socket.getSession()
        const fast = session ? peerCertificateOfSession(session) : undefined
        seen.push({
          fast: fast ? derFingerprintSha256(fast) : undefined,
          slow: fingerprint256Hex(socket.getPeerX509Certificate()!.fingerprint256),
          viaAuth: peerFingerprint(socket),
          resumed: socket.isSessionReused(),
        })
        socket.end('ok')
      },
    )
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as { port: number }).port
  })
  after(async () => {
    server?.close()
    await rm(dir, { recursive: true, force: true })
  })

  /** One connection; resolves with the session to resume with next. */
  function once(version: 'TLSv1.2' | 'TLSv1.3', session?: Buffer): Promise<Buffer | undefined> {
    return new Promise((resolve, reject) => {
      let latest: Buffer | undefined
      const socket = connect({
        host: '127.0.0.1',
        port,
        servername: 'localhost',
        key: client.key,
        cert: client.cert,
        ca: client.ca,
        minVersion: version,
        maxVersion: version,
        ...(session ? { session } : {}),
      })
      socket.on('session', (s: Buffer) => (latest = s))
      socket.on('error', reject)
      socket.on('data', () => undefined)
      socket.on('end', () => resolve(latest ?? socket.getSession()))
    })
  }

  for (const version of ['TLSv1.2', 'TLSv1.3'] as const) {
    it(`${version}: full and resumed, the session holds the presented certificate and both ways agree`, async () => {
      seen.length = 0
      const session = await once(version)
      assert.ok(session, 'the client got a session to resume')
      await once(version, session)
      assert.deepEqual(
        seen.map((s) => s.resumed),
        [false, true],
      )
      for (const s of seen) {
        assert.equal(s.fast, client.fingerprint, 'the session holds the certificate the client presented')
        assert.equal(s.slow, client.fingerprint)
        assert.equal(s.viaAuth, client.fingerprint)
      }
    })
  }

  it('a session buffer that does not parse, or holds no peer, gives nothing (the slow way is used)', () => {
    assert.equal(peerCertificateOfSession(Buffer.from('not a session')), undefined)
    assert.equal(peerCertificateOfSession(Buffer.from([0x30, 0x03, 0x02, 0x01, 0x01])), undefined)
    assert.equal(peerCertificateOfSession(Buffer.alloc(0)), undefined)
    // The fields are walked by their headers: a peer is found after them, and read as strictly as der-reader reads.
    const session = (...bytes: number[]) => peerCertificateOfSession(Buffer.from(bytes))
    assert.deepEqual(session(0x30, 0x07, 0x02, 0x01, 0x01, 0xa3, 0x02, 0x30, 0x00), Buffer.from([0x30, 0x00]))
    // Data after the session, a field or certificate running past its container, two elements in the peer field.
    assert.equal(session(0x30, 0x07, 0x02, 0x01, 0x01, 0xa3, 0x02, 0x30, 0x00, 0x00), undefined)
    assert.equal(session(0x30, 0x07, 0x02, 0x09, 0x01, 0xa3, 0x02, 0x30, 0x00), undefined)
    assert.equal(session(0x30, 0x07, 0x02, 0x01, 0x01, 0xa3, 0x02, 0x30, 0x01), undefined)
    assert.equal(session(0x30, 0x09, 0x02, 0x01, 0x01, 0xa3, 0x04, 0x30, 0x00, 0x05, 0x00), undefined)
    // A length not in its shortest form (BER), an indefinite length, a peer that is not a SEQUENCE.
    assert.equal(session(0x30, 0x81, 0x07, 0x02, 0x01, 0x01, 0xa3, 0x02, 0x30, 0x00), undefined)
    assert.equal(session(0x30, 0x80, 0x02, 0x01, 0x01, 0xa3, 0x02, 0x30, 0x00, 0x00, 0x00), undefined)
    assert.equal(session(0x30, 0x07, 0x02, 0x01, 0x01, 0xa3, 0x02, 0x04, 0x00), undefined)
  })
})
