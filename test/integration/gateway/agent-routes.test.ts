import assert from 'node:assert/strict'

import { fixedClock } from '../../../src/config/clock.js'
import { listNodeCertificates } from '../../../src/store/pki/certificates.js'
import { createJob, getJob } from '../../../src/store/scheduling/jobs.js'
import { getNode, setNodeStatus } from '../../../src/store/nodes/nodes.js'
import { startTestGateway, type AgentIdentityFiles, type TestGateway } from '../../support/gateway.js'
import { makeCsr, nodeKey } from '../../support/pki.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'

/** A checks result of the contract's shape (src/protocol/check-result.ts). */
const CHECKS = { checks: [{ id: 'host:br-netfilter', status: 'pass', detail: 'loaded' }] }
const FAILURE = { error: { code: 'job_error', message: 'it broke' } }
const FACTS = {
  cpu_count: 4,
  memory_mb: 8192,
  data_disk_free_gb: 120.5,
  kernel: '6.1.0-28-amd64',
  docker_version: '27.3.1',
  agent_version: '0.1.0',
  bridge_netfilter: true,
  clock_skew_ms: 12,
}

function errorCode(reply: { body: Record<string, unknown> }): string | undefined {
  return (reply.body.error as { code?: string } | undefined)?.code
}

async function jobRow(gw: TestGateway, id: string): Promise<Record<string, unknown>> {
  const { rows } = await gw.db.pool.query('SELECT * FROM jobs WHERE id = $1', [id])
  return rows[0] as Record<string, unknown>
}

/** Move every lease's expiry into the past on the database's clock (what time passing would do). */
async function expireLeases(gw: TestGateway): Promise<void> {
  await gw.db.pool.query("UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE status = 'leased'")
}

describe('gateway: agent routes', function () {
  this.timeout(120_000)
  let pg: DisposablePostgres
  before(async () => {
    pg = await startDisposablePostgres()
  })
  after(async () => {
    await pg?.stop()
  })

  describe('heartbeats, leases and jobs', () => {
    let gw: TestGateway
    let clock: ReturnType<typeof fixedClock>
    let agent: AgentIdentityFiles
    beforeEach(async () => {
      clock = fixedClock(new Date())
      gw = await startTestGateway({ postgresUrl: pg.url, clock, tuning: { heartbeatFlushMs: 3_600_000 } })
      await gw.declareNode('node-a')
      agent = await gw.enroll('node-a', await gw.issueSecret('node-a'))
    })
    afterEach(async () => {
      await gw?.close()
    })

    it('coalesces heartbeats and writes them bounded in one batch; state changes are immediate', async () => {
      const others: AgentIdentityFiles[] = []
      for (const id of ['node-b', 'node-c']) {
        await gw.declareNode(id)
        others.push(await gw.enroll(id, await gw.issueSecret(id)))
      }
      const enrolledSeen = (await getNode(gw.db.pool, 'node-a'))!.lastSeenAt
      assert.ok(enrolledSeen, 'enrollment (a state change) wrote last_seen_at at once')
      clock.advance(5000)
      const reply = await gw.agent(agent, 'POST', '/v1/agent/heartbeat', {
        facts: { ...FACTS, kernel: 'x'.repeat(10_000) },
      })
      assert.equal(reply.status, 200)
      assert.equal(reply.body.node_status, 'active')
      for (const other of others)
        assert.equal((await gw.agent(other, 'POST', '/v1/agent/heartbeat', { facts: FACTS })).status, 200)
      assert.equal(
        (await getNode(gw.db.pool, 'node-a'))!.lastSeenAt!.getTime(),
        enrolledSeen.getTime(),
        'not written before the batch',
      )
      const batchesBefore = gw.gateway!.metrics.heartbeatBatchSize.observations
      await gw.flushHeartbeats()
      assert.equal(gw.gateway!.metrics.heartbeatBatchSize.observations, batchesBefore + 1, 'three nodes, one write')
      const node = await getNode(gw.db.pool, 'node-a')
      // last_seen_at is on the database's clock (issue 11): the beat, moved by the gateway clock's offset, lands after the enrollment.
      assert.ok(node!.lastSeenAt!.getTime() > enrolledSeen.getTime())
      const { rows } = await gw.db.pool.query(
        'SELECT host_cpu_count, host_memory_mb, host_kernel, host_bridge_netfilter, host_clock_skew_ms, host_facts_at FROM nodes WHERE id = $1',
        ['node-a'],
      )
      assert.equal(rows[0].host_cpu_count, 4)
      assert.equal(rows[0].host_memory_mb, 8192)
      assert.ok(rows[0].host_kernel.length <= 256)
      assert.equal(rows[0].host_bridge_netfilter, true)
      assert.equal(rows[0].host_clock_skew_ms, 12)
    })

    it('leases a job with a random token, extends it, completes it; a stale token gets 409 and writes nothing', async () => {
      const job = await createJob(gw.db.pool, { nodeId: 'node-a', kind: 'checks', now: clock.now() })
      const leased = await gw.agent(agent, 'POST', '/v1/agent/lease', { facts: FACTS })
      assert.equal(leased.status, 200)
      const j = leased.body.job as {
        id: string
        kind: string
        lease_token: string
        lease_expires_at: string
        payload: unknown
      }
      assert.equal(j.id, job.id)
      assert.equal(j.kind, 'checks')
      assert.deepEqual(j.payload, {})
      assert.match(j.lease_token, /^[A-Za-z0-9_-]{43}$/)
      const stored = await jobRow(gw, job.id)
      assert.notDeepEqual(stored.lease_token_sha256, Buffer.from(j.lease_token), 'only the hash is stored')
      assert.equal((stored.lease_token_sha256 as Buffer).length, 32)
      assert.equal(
        (await gw.agent(agent, 'POST', '/v1/agent/lease', { facts: FACTS })).body.job,
        null,
        'a leased job is not leased twice',
      )

      const before = await jobRow(gw, job.id)
      const stale = 'A'.repeat(43)
      const r1 = await gw.agent(agent, 'POST', `/v1/agent/jobs/${job.id}/heartbeat`, { lease_token: stale })
      const r2 = await gw.agent(agent, 'POST', `/v1/agent/jobs/${job.id}/complete`, {
        lease_token: stale,
        status: 'succeeded',
        result: CHECKS,
      })
      const r3 = await gw.agent(agent, 'POST', '/v1/agent/jobs/not-a-uuid/complete', {
        lease_token: stale,
        status: 'succeeded',
        result: CHECKS,
      })
      for (const r of [r1, r2, r3]) {
        assert.equal(r.status, 409)
        assert.equal(errorCode(r), 'lease_conflict')
      }
      assert.deepEqual(await jobRow(gw, job.id), before, 'a stale token wrote nothing')

      clock.advance(10_000)
      const hb = await gw.agent(agent, 'POST', `/v1/agent/jobs/${job.id}/heartbeat`, { lease_token: j.lease_token })
      assert.equal(hb.status, 200)
      assert.equal(hb.body.lease_expires_at, new Date(clock.now().getTime() + 120_000).toISOString())
      const result = { checks: [{ id: 'host:br-netfilter', status: 'pass', detail: 'loaded' }] }
      const done = await gw.agent(agent, 'POST', `/v1/agent/jobs/${job.id}/complete`, {
        lease_token: j.lease_token,
        status: 'succeeded',
        result,
      })
      assert.equal(done.status, 200)
      const finished = await getJob(gw.db.pool, job.id)
      assert.equal(finished!.status, 'succeeded')
      assert.deepEqual(finished!.result, result)
      const again = await gw.agent(agent, 'POST', `/v1/agent/jobs/${job.id}/complete`, {
        lease_token: j.lease_token,
        status: 'failed',
        result: FAILURE,
      })
      assert.equal(again.status, 409, 'a finished job cannot be completed again')
    })

    it('refuses a completion whose result breaks the contract (unregistered code, unknown status, no checks) with 400 and stores nothing', async () => {
      const job = await createJob(gw.db.pool, { nodeId: 'node-a', kind: 'checks', now: clock.now() })
      const j = (await gw.agent(agent, 'POST', '/v1/agent/lease', { facts: FACTS })).body.job as { lease_token: string }
      const before = await jobRow(gw, job.id)
      const bad = [
        { checks: [{ id: 'host:br-netfilter', status: 'fail', code: 'HOST_BR_NETFILTER_MISSING', detail: 'x' }] },
        { checks: [{ id: 'host:br-netfilter', status: 'exploded', detail: 'x' }] },
        { checks: [{ id: 'Bad ID', status: 'pass', detail: 'x' }] },
        { checks: [] },
        {},
      ]
      for (const result of bad) {
        const r = await gw.agent(agent, 'POST', `/v1/agent/jobs/${job.id}/complete`, {
          lease_token: j.lease_token,
          status: 'succeeded',
          result,
        })
        assert.equal(r.status, 400, JSON.stringify(result))
        assert.equal(errorCode(r), 'request_invalid')
        assert.match(String((r.body.error as { message: string }).message), /result/)
      }
      assert.deepEqual(await jobRow(gw, job.id), before, 'nothing was written')
      const done = await gw.agent(agent, 'POST', `/v1/agent/jobs/${job.id}/complete`, {
        lease_token: j.lease_token,
        status: 'succeeded',
        result: CHECKS,
      })
      assert.equal(done.status, 200)
    })

    it('an abandoned lease expires and the job is leased again with a new token; the old token then gets 409', async () => {
      const job = await createJob(gw.db.pool, { nodeId: 'node-a', kind: 'checks', now: clock.now() })
      const first = (await gw.agent(agent, 'POST', '/v1/agent/lease', {})).body.job as { lease_token: string }
      // Expiry is the database's judgement (issue 11): moving the gateway's clock expires nothing.
      clock.advance(121_000)
      assert.equal((await gw.agent(agent, 'POST', '/v1/agent/lease', {})).body.job, null)
      await expireLeases(gw)
      const second = (await gw.agent(agent, 'POST', '/v1/agent/lease', {})).body.job as {
        id: string
        lease_token: string
        attempt: number
      }
      assert.equal(second.id, job.id)
      assert.equal(second.attempt, 2)
      assert.notEqual(second.lease_token, first.lease_token)
      assert.equal(
        (
          await gw.agent(agent, 'POST', `/v1/agent/jobs/${job.id}/complete`, {
            lease_token: first.lease_token,
            status: 'succeeded',
            result: CHECKS,
          })
        ).status,
        409,
      )
      assert.equal(
        (
          await gw.agent(agent, 'POST', `/v1/agent/jobs/${job.id}/complete`, {
            lease_token: second.lease_token,
            status: 'succeeded',
            result: CHECKS,
          })
        ).status,
        200,
      )
    })

    it('a job abandoned on its last attempt fails instead of being leased forever', async () => {
      const job = await createJob(gw.db.pool, { nodeId: 'node-a', kind: 'checks', now: clock.now(), maxAttempts: 1 })
      assert.ok((await gw.agent(agent, 'POST', '/v1/agent/lease', {})).body.job)
      await expireLeases(gw)
      assert.equal((await gw.agent(agent, 'POST', '/v1/agent/lease', {})).body.job, null)
      const failed = await getJob(gw.db.pool, job.id)
      assert.equal(failed!.status, 'failed')
      assert.deepEqual(failed!.result, { error: 'lease_expired', attempts: 1 })
    })

    it('a draining node gets 403 node_not_active on lease, but its completion of an already-leased job lands', async () => {
      const job = await createJob(gw.db.pool, { nodeId: 'node-a', kind: 'checks', now: clock.now() })
      const j = (await gw.agent(agent, 'POST', '/v1/agent/lease', {})).body.job as { lease_token: string }
      await createJob(gw.db.pool, { nodeId: 'node-a', kind: 'checks', now: clock.now() })
      await setNodeStatus(gw.db.pool, 'node-a', 'draining')
      const refused = await gw.agent(agent, 'POST', '/v1/agent/lease', { facts: FACTS })
      assert.equal(refused.status, 403)
      assert.equal(errorCode(refused), 'node_not_active')
      assert.equal(refused.body.node_status, 'draining')
      const hb = await gw.agent(agent, 'POST', '/v1/agent/heartbeat', { facts: FACTS })
      assert.equal(hb.status, 200)
      assert.equal(hb.body.node_status, 'draining')
      const done = await gw.agent(agent, 'POST', `/v1/agent/jobs/${job.id}/complete`, {
        lease_token: j.lease_token,
        status: 'succeeded',
        result: CHECKS,
      })
      assert.equal(done.status, 200)
      assert.equal((await getJob(gw.db.pool, job.id))!.status, 'succeeded')
    })

    it('a lost node gets 403 node_lost with its cleanup list, and 409 on completing a job it held', async () => {
      const job = await createJob(gw.db.pool, { nodeId: 'node-a', kind: 'checks', now: clock.now() })
      const j = (await gw.agent(agent, 'POST', '/v1/agent/lease', {})).body.job as { lease_token: string }
      await setNodeStatus(gw.db.pool, 'node-a', 'lost')
      const refused = await gw.agent(agent, 'POST', '/v1/agent/lease', {})
      assert.equal(refused.status, 403)
      assert.equal(errorCode(refused), 'node_lost')
      assert.deepEqual(refused.body.cleanup, [{ job_id: job.id }])
      const done = await gw.agent(agent, 'POST', `/v1/agent/jobs/${job.id}/complete`, {
        lease_token: j.lease_token,
        status: 'succeeded',
        result: CHECKS,
      })
      assert.equal(done.status, 409)
      assert.equal((await getJob(gw.db.pool, job.id))!.status, 'leased')
    })

    it('a retired node, or one re-provisioned with a new secret, gets 401 certificate_refused', async () => {
      await setNodeStatus(gw.db.pool, 'node-a', 'retired')
      const r = await gw.agent(agent, 'POST', '/v1/agent/heartbeat', {})
      assert.equal(r.status, 401)
      assert.equal(errorCode(r), 'certificate_refused')
      await setNodeStatus(gw.db.pool, 'node-a', 'active')
      assert.equal((await gw.agent(agent, 'POST', '/v1/agent/heartbeat', {})).status, 200)
      await gw.issueSecret('node-a')
      assert.equal((await gw.agent(agent, 'GET', '/v1/agent/identity')).status, 401)
    })

    it('rejects bodies that are not JSON objects, or too large, with 400/413 request_invalid', async () => {
      const notJson = await gw.agent(agent, 'POST', '/v1/agent/heartbeat', '{not json')
      assert.equal(notJson.status, 400)
      assert.equal(errorCode(notJson), 'request_invalid')
      const big = await gw.agent(agent, 'POST', '/v1/agent/heartbeat', { facts: { kernel: 'x'.repeat(100_000) } })
      assert.equal(big.status, 413)
      const unknown = await gw.agent(agent, 'GET', '/v1/agent/nothing')
      assert.equal(unknown.status, 404)
    })
  })

  describe('renewal and revocation', () => {
    const DAY = 86_400_000
    it('refuses renewal before the two-thirds point; after renewal the old certificate works until the new one is used, then gets 401 on every route', async () => {
      // The gateway's clock starts 20 h in the past, so certificates stay valid for TLS (which uses the real time).
      const realNow = Date.now()
      const clock = fixedClock(new Date(realNow - 20 * 3600_000))
      const gw = await startTestGateway({ postgresUrl: pg.url, clock })
      try {
        await gw.declareNode('node-r')
        const old = await gw.enroll('node-r', await gw.issueSecret('node-r'))
        assert.equal(new Date(old.notAfter).getTime() - clock.now().getTime() <= DAY, true)
        const key = await nodeKey()
        const csr = await makeCsr(key, { name: 'CN=node-r' })

        clock.set(new Date(realNow - 20 * 3600_000 + 15 * 3600_000))
        const early = await gw.agent(old, 'POST', '/v1/agent/certificate/renew', { csr_pem: csr })
        assert.equal(early.status, 409)
        assert.equal(errorCode(early), 'renewal_not_due')
        assert.equal((await listNodeCertificates(gw.db.pool, 'node-r')).length, 1, 'nothing issued')

        clock.set(new Date(realNow))
        const bad = await gw.agent(old, 'POST', '/v1/agent/certificate/renew', {
          csr_pem: await makeCsr(key, { name: 'CN=node-x' }),
        })
        assert.equal(bad.status, 400)
        assert.equal(errorCode(bad), 'renewal_csr_invalid')
        const renewed = await gw.agent(old, 'POST', '/v1/agent/certificate/renew', { csr_pem: csr })
        assert.equal(renewed.status, 200, JSON.stringify(renewed.body))
        assert.equal(renewed.body.ca_bundle_pem, gw.caPem)
        const fresh = { keyPem: key.privateKeyPem, certificatePem: renewed.body.certificate_pem as string }
        const certs = await listNodeCertificates(gw.db.pool, 'node-r')
        assert.equal(certs.length, 2)
        assert.equal(certs[1]!.replacesId, certs[0]!.id)

        assert.equal(
          (await gw.agent(old, 'POST', '/v1/agent/heartbeat', {})).status,
          200,
          'old still works before the new one is used',
        )
        assert.equal((await gw.agent(fresh, 'GET', '/healthz')).status, 200, 'probing /healthz is not a first use')
        assert.equal((await gw.agent(old, 'GET', '/v1/agent/identity')).status, 200)

        const identity = await gw.agent(fresh, 'GET', '/v1/agent/identity')
        assert.equal(identity.status, 200)
        assert.equal((identity.body.certificate as { serial: string }).serial, certs[1]!.serial)
        const after = await listNodeCertificates(gw.db.pool, 'node-r')
        assert.ok(after[0]!.revokedAt, 'the old certificate is revoked on the first use of the new one')
        assert.equal(after[1]!.revokedAt, null)

        const job = await createJob(gw.db.pool, { nodeId: 'node-r', kind: 'checks', now: clock.now() })
        const routes: [string, string, unknown][] = [
          ['GET', '/healthz', undefined],
          ['POST', '/v1/agent/heartbeat', {}],
          ['POST', '/v1/agent/lease', {}],
          ['POST', `/v1/agent/jobs/${job.id}/heartbeat`, { lease_token: 'x' }],
          ['POST', `/v1/agent/jobs/${job.id}/complete`, { lease_token: 'x', status: 'succeeded' }],
          ['POST', '/v1/agent/certificate/renew', { csr_pem: csr }],
          ['GET', '/v1/agent/identity', undefined],
        ]
        for (const [method, path, body] of routes) {
          const r = await gw.agent(old, method, path, body)
          assert.equal(r.status, 401, `${method} ${path}`)
          assert.equal(errorCode(r), 'certificate_refused')
        }
        assert.equal((await gw.agent(fresh, 'POST', '/v1/agent/heartbeat', {})).status, 200)
      } finally {
        await gw.close()
      }
    })

    it('revocation takes effect at once on the gateway that saw the first use, even with the auth cache on', async () => {
      const realNow = Date.now()
      const clock = fixedClock(new Date(realNow - 20 * 3600_000))
      const gw = await startTestGateway({ postgresUrl: pg.url, clock, tuning: { authCacheMs: 600_000 } })
      try {
        await gw.declareNode('node-s')
        const old = await gw.enroll('node-s', await gw.issueSecret('node-s'))
        assert.equal((await gw.agent(old, 'POST', '/v1/agent/heartbeat', {})).status, 200)
        clock.set(new Date(realNow))
        const key = await nodeKey()
        const renewed = await gw.agent(old, 'POST', '/v1/agent/certificate/renew', {
          csr_pem: await makeCsr(key, { name: 'CN=node-s' }),
        })
        assert.equal(renewed.status, 200)
        assert.equal(
          (
            await gw.agent(
              { keyPem: key.privateKeyPem, certificatePem: renewed.body.certificate_pem as string },
              'POST',
              '/v1/agent/heartbeat',
              {},
            )
          ).status,
          200,
        )
        assert.equal((await gw.agent(old, 'POST', '/v1/agent/heartbeat', {})).status, 401)
      } finally {
        await gw.close()
      }
    })
  })
})
