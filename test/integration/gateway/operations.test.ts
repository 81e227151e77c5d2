import assert from 'node:assert/strict'
import { X509Certificate } from 'node:crypto'
import { chmod, copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'node:tls'

import pg from 'pg'

import { fixedClock } from '../../../src/config/clock.js'
import type { GatewayWithControls } from '../../../src/gateway/controls.js'
import { startGatewayWithControls } from '../../../src/gateway/gateway.js'
import { silentLogger } from '../../../src/log/logger.js'
import { initPki } from '../../../src/pki/init-pki.js'
import { loadPkiSet } from '../../../src/pki/pki-set.js'
import { buildTrustBundle } from '../../../src/pki/trust-bundle.js'
import { listNodeCertificates } from '../../../src/store/pki/certificates.js'
import { createJob } from '../../../src/store/scheduling/jobs.js'
import { getNode } from '../../../src/store/nodes/nodes.js'
import { httpsJson, startTestGateway, TEST_TUNING, type TestGateway } from '../../support/gateway.js'
import { makeCsr, nodeKey } from '../../support/pki.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'

function serverCertificateOf(port: number, ca: string): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      const raw = socket.getPeerCertificate().raw
      socket.end()
      resolve(new X509Certificate(raw))
    })
    socket.on('error', reject)
  })
}

describe('gateway: operations', function () {
  this.timeout(120_000)
  let server: DisposablePostgres
  before(async () => {
    server = await startDisposablePostgres()
  })
  after(async () => {
    await server?.stop()
  })

  describe('one gateway', () => {
    let gw: TestGateway
    afterEach(async () => {
      await gw?.close()
    })

    it('sheds enrollment load per source with 429 and Retry-After, counted in metrics', async () => {
      gw = await startTestGateway({
        postgresUrl: server.url,
        // A clock that stands still: no token refills between the requests, however slow the machine.
        clock: fixedClock(new Date()),
        tuning: { enrollRate: { perSource: { burst: 3, perSecond: 0.1 }, global: { burst: 100, perSecond: 100 } } },
      })
      const statuses: number[] = []
      let retryAfter: string | string[] | undefined
      for (let i = 0; i < 5; i++) {
        const reply = await gw.enrollPost({ node_id: 'nobody', enrollment_secret: 'x', csr_pem: 'y' })
        statuses.push(reply.status)
        if (reply.status === 429) retryAfter = reply.headers['retry-after']
      }
      assert.deepEqual(statuses, [400, 400, 400, 429, 429])
      assert.equal(retryAfter, '10')
      const metrics = await (await fetch(`${gw.metricsUrl}/metrics`)).text()
      assert.match(metrics, /fleetkit_gateway_enrollments_total\{outcome="rate_limited"\} 2/)
      assert.match(metrics, /fleetkit_gateway_enrollments_total\{outcome="csr_invalid"\} 3/)
    })

    it('serves Prometheus metrics: requests by route and status, heartbeat batches, certificates expiring soon', async () => {
      gw = await startTestGateway({ postgresUrl: server.url, agentCertLifetimeSeconds: 3000 })
      await gw.declareNode('node-m')
      const id = await gw.enroll('node-m', await gw.issueSecret('node-m'))
      await gw.agent(id, 'POST', '/v1/agent/heartbeat', { facts: {} })
      await gw.agent(undefined, 'GET', '/healthz').catch(() => undefined)
      await gw.flushHeartbeats()
      const reply = await fetch(`${gw.metricsUrl}/metrics`)
      assert.match(reply.headers.get('content-type') ?? '', /^text\/plain/)
      const text = await reply.text()
      assert.match(
        text,
        /fleetkit_gateway_requests_total\{listener="agent",route="\/v1\/agent\/heartbeat",status="200"\} 1/,
      )
      assert.match(text, /fleetkit_gateway_requests_total\{listener="enroll",route="\/v1\/enroll",status="200"\} 1/)
      assert.match(text, /fleetkit_gateway_heartbeat_batch_size_count 1/)
      assert.match(text, /fleetkit_gateway_certificates_expiring_soon\{within="1h"\} 1/)
      assert.match(text, /fleetkit_gateway_agent_auth_refusals_total\{reason="tls_handshake"\}/)
      assert.equal((await fetch(`${gw.metricsUrl}/nothing`)).status, 404)
    })

    it('hot-reloads a changed PKI set whole: a half-written set is ignored, a complete one is served, and old-CA certificates may renew at once', async () => {
      gw = await startTestGateway({ postgresUrl: server.url })
      const port = Number(new URL(gw.agentUrl).port)
      await gw.declareNode('node-h')
      const old = await gw.enroll('node-h', await gw.issueSecret('node-h'))
      const oldCa = await readFile(join(gw.pkiDir, 'ca.pem'), 'utf8')
      const before = await serverCertificateOf(port, gw.caPem)

      const next = await mkdtemp(join(tmpdir(), 'fleetkit-next-pki-'))
      try {
        await initPki({ pkiDir: join(next, 'pki'), serverNames: ['localhost', '127.0.0.1'], now: new Date() })
        const newCa = await readFile(join(next, 'pki', 'ca.pem'), 'utf8')
        // Half-written: the new CA certificate without its key.
        await copyFile(join(next, 'pki', 'ca.pem'), join(gw.pkiDir, 'ca.pem'))
        assert.equal(await gw.gateway!.reloadPki(), 'kept')
        assert.equal((await serverCertificateOf(port, gw.caPem)).fingerprint256, before.fingerprint256)

        // Complete: new CA, bundle new + old (as a rotation's first phase writes it), new server certificate.
        for (const name of ['ca.key', 'server.pem', 'server.key'])
          await copyFile(join(next, 'pki', name), join(gw.pkiDir, name))
        const bundle = buildTrustBundle([newCa, oldCa])
        await writeFile(join(gw.pkiDir, 'ca-bundle.pem'), bundle)
        assert.equal(await gw.gateway!.reloadPki(), 'replaced')
        assert.equal(await gw.gateway!.reloadPki(), 'unchanged')
        // A key that became group-readable is never loaded: the running set stays.
        await chmod(join(gw.pkiDir, 'ca.key'), 0o640)
        assert.equal(await gw.gateway!.reloadPki(), 'kept')
        await chmod(join(gw.pkiDir, 'ca.key'), 0o600)
        assert.equal(await gw.gateway!.reloadPki(), 'unchanged')
        const after = await serverCertificateOf(port, newCa)
        assert.notEqual(after.fingerprint256, before.fingerprint256)

        // The old-CA certificate still authenticates (its CA is in the bundle) and is due for renewal at once.
        assert.equal(
          (
            await httpsJson(gw.agentUrl, 'GET', '/v1/agent/identity', undefined, {
              ca: newCa,
              key: old.keyPem,
              cert: old.certificatePem,
            })
          ).status,
          200,
        )
        const key = await nodeKey()
        const renewed = await httpsJson(
          gw.agentUrl,
          'POST',
          '/v1/agent/certificate/renew',
          { csr_pem: await makeCsr(key, { name: 'CN=node-h' }) },
          { ca: newCa, key: old.keyPem, cert: old.certificatePem },
        )
        assert.equal(renewed.status, 200, JSON.stringify(renewed.body))
        assert.equal(renewed.body.ca_bundle_pem, bundle)
        const certs = await listNodeCertificates(gw.db.pool, 'node-h')
        assert.equal(certs[1]!.issuerCaSha256, gw.gateway!.currentPkiSet().ca.fingerprintSha256)
        assert.notEqual(certs[0]!.issuerCaSha256, certs[1]!.issuerCaSha256)
      } finally {
        await rm(next, { recursive: true, force: true })
      }
    })
  })

  describe('two gateways on one database', () => {
    let gw: TestGateway
    let second: GatewayWithControls
    let secondPool: pg.Pool
    const clock2 = fixedClock(new Date())
    before(async () => {
      // No sweeper: a node given a secret on the second gateway's clock, 20 h back, would be failed by a
      // sweep tick (its secret expired on the database's clock) before the enrollment it is given for.
      gw = await startTestGateway({ postgresUrl: server.url, sweep: null, tuning: { heartbeatFlushMs: 3_600_000 } })
      secondPool = new pg.Pool({ connectionString: gw.db.url, max: 10 })
      const any = { host: '127.0.0.1', port: 0 }
      second = await startGatewayWithControls({
        pool: secondPool,
        pki: await loadPkiSet(gw.pkiDir, new Date()),
        enrollBind: any,
        agentBind: any,
        agentCertLifetimeSeconds: 86400,
        clock: clock2,
        logger: silentLogger,
        tuning: { ...TEST_TUNING, heartbeatFlushMs: 3_600_000 },
      })
    })
    after(async () => {
      await second?.close()
      await secondPool?.end()
      await gw?.close()
    })
    const agentUrl2 = () => `https://127.0.0.1:${second.agentAddress.port}`

    it('a certificate enrolled on one works on the other; a job is leased by exactly one of many concurrent leases', async () => {
      await gw.declareNode('node-2g')
      const id = await gw.enroll('node-2g', await gw.issueSecret('node-2g'))
      const tls = { ca: gw.caPem, key: id.keyPem, cert: id.certificatePem }
      assert.equal((await httpsJson(agentUrl2(), 'GET', '/v1/agent/identity', undefined, tls)).status, 200)
      await createJob(gw.db.pool, { nodeId: 'node-2g', kind: 'checks', now: new Date() })
      const leases = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          i % 2 === 0
            ? gw.agent(id, 'POST', '/v1/agent/lease', {})
            : httpsJson(agentUrl2(), 'POST', '/v1/agent/lease', {}, tls),
        ),
      )
      assert.equal(leases.filter((r) => r.status === 200 && r.body.job !== null).length, 1)
    })

    it('heartbeat batches from both land in any order without moving last_seen_at backwards', async () => {
      await gw.declareNode('node-hb')
      const id = await gw.enroll('node-hb', await gw.issueSecret('node-hb'))
      const tls = { ca: gw.caPem, key: id.keyPem, cert: id.certificatePem }
      clock2.set(new Date(Date.now() - 60_000))
      await httpsJson(agentUrl2(), 'POST', '/v1/agent/heartbeat', { facts: { kernel: 'older' } }, tls)
      await gw.agent(id, 'POST', '/v1/agent/heartbeat', { facts: { kernel: 'newer' } })
      await gw.flushHeartbeats()
      const first = await getNode(gw.db.pool, 'node-hb')
      await second.flushHeartbeats()
      const after = await getNode(gw.db.pool, 'node-hb')
      // Each gateway's beat is put on the database's clock (issue 11): the later write may move it forward, never back.
      assert.ok(after!.lastSeenAt!.getTime() >= first!.lastSeenAt!.getTime())
      assert.equal(after!.hostKernel, 'newer')
    })

    it('the first use of a renewed certificate on one gateway revokes the old one on both', async () => {
      await gw.declareNode('node-rv')
      // Enrolled on the second gateway 20 h ago (its clock), renewed there now, first used on the first.
      const realNow = Date.now()
      clock2.set(new Date(realNow - 20 * 3600_000))
      const secret = await gw.issueSecret('node-rv', { now: clock2.now() })
      const oldKey = await nodeKey()
      const enrolled = await httpsJson(
        `https://127.0.0.1:${second.enrollAddress.port}`,
        'POST',
        '/v1/enroll',
        { node_id: 'node-rv', enrollment_secret: secret, csr_pem: await makeCsr(oldKey, { name: 'CN=node-rv' }) },
        { ca: gw.caPem },
      )
      assert.equal(enrolled.status, 200, JSON.stringify(enrolled.body))
      const old = { keyPem: oldKey.privateKeyPem, certificatePem: enrolled.body.certificate_pem as string }
      clock2.set(new Date(realNow))
      const key = await nodeKey()
      const renewed = await httpsJson(
        agentUrl2(),
        'POST',
        '/v1/agent/certificate/renew',
        { csr_pem: await makeCsr(key, { name: 'CN=node-rv' }) },
        { ca: gw.caPem, key: old.keyPem, cert: old.certificatePem },
      )
      assert.equal(renewed.status, 200, JSON.stringify(renewed.body))
      const fresh = { keyPem: key.privateKeyPem, certificatePem: renewed.body.certificate_pem as string }
      assert.equal((await gw.agent(old, 'POST', '/v1/agent/heartbeat', {})).status, 200)
      assert.equal((await gw.agent(fresh, 'POST', '/v1/agent/heartbeat', {})).status, 200)
      assert.equal((await gw.agent(old, 'POST', '/v1/agent/heartbeat', {})).status, 401)
      assert.equal(
        (
          await httpsJson(
            agentUrl2(),
            'POST',
            '/v1/agent/heartbeat',
            {},
            { ca: gw.caPem, key: old.keyPem, cert: old.certificatePem },
          )
        ).status,
        401,
      )
    })
  })
})
