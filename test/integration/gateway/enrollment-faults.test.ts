// A gateway that dies between issuing a certificate and the answer reaching the node (issue 12,
// item 2): the agent kept its key and CSR, and the repeat with the same secret and key gets the
// certificate already issued; any other key, or the same one after the secret's lifetime, gets 401.
import assert from 'node:assert/strict'
import { X509Certificate } from 'node:crypto'
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { loadAgentConfig } from '../../../src/agent/config.js'
import { enroll } from '../../../src/agent/enroll.js'
import { pendingEnrollmentPath } from '../../../src/agent/pending-enrollment.js'
import { fixedClock } from '../../../src/config/clock.js'
import { memoryLogger } from '../../../src/log/logger.js'
import { listNodeCertificates } from '../../../src/store/pki/certificates.js'
import { getNode } from '../../../src/store/nodes/nodes.js'
import { eventually } from '../../support/eventually.js'
import { startTestGateway, type TestGateway } from '../../support/gateway.js'
import { makeCsr, nodeKey } from '../../support/pki.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  )
}

describe('gateway faults: killed right after an enrollment committed', function () {
  this.timeout(180_000)
  let postgres: DisposablePostgres
  before(async () => {
    postgres = await startDisposablePostgres()
  })
  after(async () => {
    await postgres?.stop()
  })

  it('the node is not stranded: the agent retries with the same key and gets the certificate already issued', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleetkit-enroll-fault-'))
    const crashing = await startTestGateway({
      postgresUrl: postgres.url,
      mode: 'process',
      crashAfterEnrollCommit: true,
    })
    let second: TestGateway | undefined
    try {
      await crashing.declareNode('node-k')
      await writeFile(join(dir, 'secret'), await crashing.issueSecret('node-k'), { mode: 0o600 })
      await writeFile(join(dir, 'ca.pem'), crashing.caPem)
      const configFor = async (gw: TestGateway) => {
        await writeFile(
          join(dir, 'agent.env'),
          [
            'FLEETKIT_NODE_ID=node-k',
            `FLEETKIT_GATEWAY_URL=${gw.agentUrl}`,
            `FLEETKIT_ENROLL_URL=${gw.enrollUrl}`,
            `FLEETKIT_GATEWAY_CA_FILE=${join(dir, 'ca.pem')}`,
            `FLEETKIT_ENROLLMENT_SECRET_FILE=${join(dir, 'secret')}`,
            `FLEETKIT_AGENT_PKI_DIR=${join(dir, 'pki')}`,
            '',
          ].join('\n'),
        )
        return loadAgentConfig({ env: { FLEETKIT_AGENT_CONFIG: join(dir, 'agent.env') }, flags: {} })
      }
      const log = memoryLogger('agent', 'debug')

      // 1. The gateway commits the enrollment and dies (SIGKILL) before answering.
      await assert.rejects(
        enroll(await configFor(crashing), { log }),
        (error: { code?: string }) => error.code === 'GATEWAY_UNREACHABLE',
      )
      await eventually('the gateway to die', () => crashing.child!.signalCode === 'SIGKILL', {
        timeoutMs: 10_000,
        intervalMs: 20,
      })
      const rows = await listNodeCertificates(crashing.db.pool, 'node-k')
      assert.equal(rows.length, 1, 'the enrollment committed')
      assert.equal((await getNode(crashing.db.pool, 'node-k'))!.status, 'active')
      assert.ok(await exists(pendingEnrollmentPath(join(dir, 'pki'))), 'the key and CSR were kept on disk')
      assert.ok(!(await exists(join(dir, 'pki', 'agent.pem'))), 'nothing staged')
      assert.ok(await exists(join(dir, 'secret')), 'the secret file is kept until an identity is staged')

      // 2. Another gateway on the same database and PKI: the retry gets the same certificate.
      second = await startTestGateway({ postgresUrl: postgres.url, mode: 'process', shared: crashing })
      const result = await enroll(await configFor(second), { log })
      assert.equal(result.outcome, 'enrolled')
      assert.ok(
        log.lines.some((l) => l.msg === 'enroll_resumed'),
        'the agent said it resent the same key',
      )
      const staged = new X509Certificate(await readFile(join(dir, 'pki', 'agent.pem'), 'utf8'))
      assert.equal(
        staged.fingerprint256.replaceAll(':', '').toLowerCase(),
        rows[0]!.fingerprintSha256,
        'the certificate issued before the crash',
      )
      assert.equal((await listNodeCertificates(second.db.pool, 'node-k')).length, 1, 'nothing issued twice')
      assert.ok(!(await exists(pendingEnrollmentPath(join(dir, 'pki')))), 'the pending pair is gone once staged')
      assert.ok(!(await exists(join(dir, 'secret'))), 'the secret file is deleted')

      // 3. The used secret with any other key is the uniform 401.
      const other = await second.enrollPost({
        node_id: 'node-k',
        enrollment_secret: 'x',
        csr_pem: await makeCsr(await nodeKey(), { name: 'CN=node-k' }),
      })
      assert.equal(other.status, 401)
      // The staged identity works.
      const identity = {
        keyPem: await readFile(join(dir, 'pki', 'agent.key'), 'utf8'),
        certificatePem: staged.toString(),
      }
      assert.equal((await second.agent(identity, 'GET', '/v1/agent/identity')).status, 200)
    } finally {
      await second?.close()
      await crashing.close()
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('answers a repeat with the same secret and key with the same certificate, within the secret lifetime only; other keys get 401', async () => {
    const clock = fixedClock(new Date())
    const gw = await startTestGateway({ postgresUrl: postgres.url, clock })
    try {
      await gw.declareNode('node-r')
      const secret = await gw.issueSecret('node-r', { ttlSeconds: 600 })
      const key = await nodeKey()
      const csr = await makeCsr(key, { name: 'CN=node-r' })
      const first = await gw.enrollPost({ node_id: 'node-r', enrollment_secret: secret, csr_pem: csr })
      assert.equal(first.status, 200)
      clock.advance(60_000)
      const repeat = await gw.enrollPost({ node_id: 'node-r', enrollment_secret: secret, csr_pem: csr })
      assert.equal(repeat.status, 200)
      assert.equal(repeat.body.certificate_pem, first.body.certificate_pem, 'the same certificate, not a second one')
      // A new CSR for the same key is the same key: still the same certificate.
      const again = await gw.enrollPost({
        node_id: 'node-r',
        enrollment_secret: secret,
        csr_pem: await makeCsr(key, { name: 'CN=node-r' }),
      })
      assert.equal(again.body.certificate_pem, first.body.certificate_pem)
      assert.equal((await listNodeCertificates(gw.db.pool, 'node-r')).length, 1)
      const otherKey = await gw.enrollPost({
        node_id: 'node-r',
        enrollment_secret: secret,
        csr_pem: await makeCsr(await nodeKey(), { name: 'CN=node-r' }),
      })
      assert.deepEqual([otherKey.status, (otherKey.body.error as { code: string }).code], [401, 'enrollment_refused'])
      const wrongSecret = await gw.enrollPost({ node_id: 'node-r', enrollment_secret: `${secret}0`, csr_pem: csr })
      assert.equal(wrongSecret.status, 401)
      clock.advance(600_000)
      const late = await gw.enrollPost({ node_id: 'node-r', enrollment_secret: secret, csr_pem: csr })
      assert.equal(late.status, 401, 'past the secret lifetime the same key is refused too')
      assert.deepEqual(late.body.error, otherKey.body.error, 'the uniform refusal')
    } finally {
      await gw.close()
    }
  })
})
