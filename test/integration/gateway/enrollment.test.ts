import assert from 'node:assert/strict'
import { connect } from 'node:tls'

import { listNodeCertificates } from '../../../src/store/pki/certificates.js'
import { getNode } from '../../../src/store/nodes/nodes.js'
import { startTestGateway, type TestGateway } from '../../support/gateway.js'
import { makeCsr, nodeKey, tamperSignature } from '../../support/pki.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'

async function nodeRow(gw: TestGateway, id: string) {
  const { rows } = await gw.db.pool.query(
    'SELECT status, enrollment_secret_used_at, last_seen_at FROM nodes WHERE id = $1',
    [id],
  )
  return rows[0] as { status: string; enrollment_secret_used_at: Date | null; last_seen_at: Date | null }
}

async function rowCounts(gw: TestGateway): Promise<{ certificates: number; events: number }> {
  const { rows } = await gw.db.pool.query(
    'SELECT (SELECT count(*) FROM node_certificates)::int AS certificates, (SELECT count(*) FROM events)::int AS events',
  )
  return rows[0] as { certificates: number; events: number }
}

describe('gateway: enrollment', function () {
  this.timeout(120_000)
  let pg: DisposablePostgres
  let gw: TestGateway
  before(async () => {
    pg = await startDisposablePostgres()
  })
  after(async () => {
    await pg?.stop()
  })
  beforeEach(async () => {
    gw = await startTestGateway({ postgresUrl: pg.url })
  })
  afterEach(async () => {
    await gw?.close()
  })

  it('enrolls a provisioning node with its secret: 200 {certificate_pem, ca_pem, not_after, server_time}, node active, certificate stored', async () => {
    await gw.declareNode('node-1')
    const secret = await gw.issueSecret('node-1')
    const id = await gw.enroll('node-1', secret)
    assert.match(id.certificatePem, /BEGIN CERTIFICATE/)
    assert.equal(id.caPem, gw.caPem)
    const node = await nodeRow(gw, 'node-1')
    assert.equal(node.status, 'active')
    assert.ok(node.enrollment_secret_used_at)
    const certs = await listNodeCertificates(gw.db.pool, 'node-1')
    assert.equal(certs.length, 1)
    assert.equal(certs[0]!.notAfter.toISOString(), id.notAfter)
    assert.equal(certs[0]!.issuerCaSha256, gw.gateway!.currentPkiSet().ca.fingerprintSha256)
    const identity = await gw.agent(id, 'GET', '/v1/agent/identity')
    assert.equal(identity.status, 200)
    assert.equal(identity.body.node_id, 'node-1')
    assert.equal(identity.body.status, 'active')
    assert.match(String(identity.body.server_time), /^\d{4}-\d\d-\d\dT/)
  })

  it('a malformed CSR gets 400 enrollment_csr_invalid, writes nothing, and leaves the secret usable', async () => {
    await gw.declareNode('node-2')
    const secret = await gw.issueSecret('node-2')
    const before = await rowCounts(gw)
    const key = await nodeKey()
    for (const csr of [
      'not a csr',
      tamperSignature(await makeCsr(key, { name: 'CN=node-2' })),
      await makeCsr(key, { name: 'CN=node-3' }),
      await makeCsr(key, { name: 'CN=node-2', dnsNames: ['evil.example'] }),
    ]) {
      const reply = await gw.enrollPost({ node_id: 'node-2', enrollment_secret: secret, csr_pem: csr })
      assert.equal(reply.status, 400)
      assert.equal((reply.body.error as { code: string }).code, 'enrollment_csr_invalid')
    }
    // Nothing is written but the audit line: every refused enrollment is an event (issue 11), never a certificate.
    assert.deepEqual(await rowCounts(gw), { ...before, events: before.events + 4 })
    const { rows: refusals } = await gw.db.pool.query(
      "SELECT data FROM events WHERE kind = 'enrollment_refused' AND node_id = 'node-2'",
    )
    assert.deepEqual(
      refusals.map((r) => r.data),
      Array(4).fill({ reason: 'csr_invalid' }),
    )
    const node = await nodeRow(gw, 'node-2')
    assert.equal(node.status, 'provisioning')
    assert.equal(node.enrollment_secret_used_at, null)
    await gw.enroll('node-2', secret)
  })

  it('unknown node, wrong, expired and used secret, and a node not provisioning all get the identical 401 body', async () => {
    await gw.declareNode('node-4')
    const secret = await gw.issueSecret('node-4')
    await gw.enroll('node-4', secret)
    await gw.declareNode('node-5')
    const expired = await gw.issueSecret('node-5', { ttlSeconds: 900, now: new Date(Date.now() - 3600_000) })
    await gw.declareNode('node-6')
    const wrongFor6 = await gw.issueSecret('node-6')
    await gw.declareNode('node-7')
    const key = await nodeKey()
    const attempt = async (nodeId: string, s: string) =>
      gw.enrollPost({ node_id: nodeId, enrollment_secret: s, csr_pem: await makeCsr(key, { name: `CN=${nodeId}` }) })
    const replies = [
      await attempt('no-such-node', secret),
      await attempt(
        'node-6',
        wrongFor6.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
      ),
      await attempt('node-5', expired),
      await attempt('node-4', secret),
      await attempt('node-7', 'a'.repeat(64)),
    ]
    for (const reply of replies) {
      assert.equal(reply.status, 401)
      const { server_time: _t, ...rest } = reply.body
      assert.deepEqual(rest, { error: { code: 'enrollment_refused', message: 'enrollment refused' } })
    }
    assert.equal((await getNode(gw.db.pool, 'node-6'))!.status, 'provisioning')
  })

  it('50 concurrent enrollments with one secret and 50 keys: exactly one succeeds, the rest get 401', async () => {
    await gw.declareNode('node-9')
    const secret = await gw.issueSecret('node-9')
    const csrs = await Promise.all(
      Array.from({ length: 50 }, async () => makeCsr(await nodeKey(), { name: 'CN=node-9' })),
    )
    const replies = await Promise.all(
      csrs.map((csr) => gw.enrollPost({ node_id: 'node-9', enrollment_secret: secret, csr_pem: csr })),
    )
    assert.equal(replies.filter((r) => r.status === 200).length, 1)
    assert.equal(replies.filter((r) => r.status === 401).length, 49)
    assert.equal((await listNodeCertificates(gw.db.pool, 'node-9')).length, 1)
  })

  it('50 concurrent enrollments with one secret and one key: one certificate is issued, and every attempt gets that one (a repeated, not a second, use)', async () => {
    await gw.declareNode('node-9b')
    const secret = await gw.issueSecret('node-9b')
    const csr = await makeCsr(await nodeKey(), { name: 'CN=node-9b' })
    const replies = await Promise.all(
      Array.from({ length: 50 }, () => gw.enrollPost({ node_id: 'node-9b', enrollment_secret: secret, csr_pem: csr })),
    )
    assert.equal(
      replies.filter((r) => r.status === 200).length,
      50,
      JSON.stringify(
        replies
          .filter((r) => r.status !== 200)
          .slice(0, 2)
          .map((r) => [r.status, r.body]),
      ),
    )
    assert.equal(new Set(replies.map((r) => r.body.certificate_pem)).size, 1)
    assert.equal((await listNodeCertificates(gw.db.pool, 'node-9b')).length, 1)
  })

  it('the enrollment listener accepts TLS without a client certificate; the agent listener rejects such clients', async () => {
    const plain = await import('../../support/gateway.js')
    const ok = await plain.httpsJson(gw.enrollUrl, 'GET', '/healthz', undefined, { ca: gw.caPem })
    assert.equal(ok.status, 200)
    await assert.rejects(gw.agent(undefined, 'GET', '/healthz'))
    await assert.rejects(gw.agent(undefined, 'POST', '/v1/agent/heartbeat', { facts: {} }))
    // The raw handshake without a certificate is refused by the server.
    const port = Number(new URL(gw.agentUrl).port)
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, ca: gw.caPem, servername: 'localhost' }, () => {
        socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n')
      })
      socket.on('data', () => resolve(false))
      socket.on('error', () => resolve(true))
      socket.on('close', () => resolve(true))
    })
    assert.equal(refused, true)
  })

  it('the enrollment listener serves no agent route', async () => {
    const plain = await import('../../support/gateway.js')
    for (const path of ['/v1/agent/heartbeat', '/v1/agent/lease', '/v1/agent/certificate/renew']) {
      const reply = await plain.httpsJson(gw.enrollUrl, 'POST', path, {}, { ca: gw.caPem })
      assert.equal(reply.status, 404)
    }
  })
})
