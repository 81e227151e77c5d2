// Malformed requests never reach a 500 (issue 12, item 3): every route of both listeners, with a
// client certificate of its own node, of another node, and without one, gets broken JSON, wrong
// types, huge and empty bodies, unknown fields, other methods and paths, bad escapes, other nodes'
// job ids and replays; the answer is always a 4xx (or a refused handshake), never a 5xx.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'

import { agentRoutes } from '../../../src/gateway/routes/agent-routes.js'
import { enrollRoutes } from '../../../src/gateway/routes/enroll-route.js'
import { createJob } from '../../../src/store/scheduling/jobs.js'
import {
  httpsJson,
  startTestGateway,
  type AgentIdentityFiles,
  type HttpReply,
  type TestGateway,
} from '../../support/gateway.js'
import { makeCsr, nodeKey } from '../../support/pki.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'
import { TEST_HOST_FACTS } from '../../support/host-facts.js'

const FACTS = TEST_HOST_FACTS
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']

/** Bodies every route gets: none of them is a valid request for any route. */
function brokenBodies(): unknown[] {
  return [
    undefined,
    '',
    '{',
    '{"facts": ',
    '[]',
    'null',
    '"text"',
    '42',
    'true',
    '\u0000\u0001\u0002',
    '{"a":'.repeat(5000),
    'x'.repeat(70 * 1024),
    JSON.stringify({ pad: 'y'.repeat(65 * 1024) }),
    {},
    { facts: 'x' },
    { facts: [] },
    { facts: { cpu_count: 'many' } },
    { facts: { ...FACTS, memory_mb: -1 } },
    { lease_token: 5 },
    { lease_token: '' },
    { lease_token: 'x'.repeat(10_000) },
    { status: 'weird', lease_token: 'a', result: {} },
    { csr_pem: 123 },
    { csr_pem: '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n' },
    { node_id: ['n'], enrollment_secret: {}, csr_pem: null },
    { node_id: 'n'.repeat(5000), enrollment_secret: 's', csr_pem: 'c' },
    { node_id: '../../etc', enrollment_secret: '%00', csr_pem: '' },
    { __proto__: { polluted: true }, constructor: { prototype: {} } },
  ]
}

describe('gateway: malformed requests never get a 5xx', function () {
  this.timeout(300_000)
  let postgres: DisposablePostgres
  let gw: TestGateway
  let a: AgentIdentityFiles
  let b: AgentIdentityFiles
  let jobOfA: string
  let tokenOfA: string
  let secret: string
  let csr: string
  before(async () => {
    postgres = await startDisposablePostgres()
    gw = await startTestGateway({ postgresUrl: postgres.url })
    for (const id of ['node-a', 'node-b', 'node-new']) await gw.declareNode(id)
    a = await gw.enroll('node-a', await gw.issueSecret('node-a'))
    b = await gw.enroll('node-b', await gw.issueSecret('node-b'))
    jobOfA = (await createJob(gw.db.pool, { nodeId: 'node-a', kind: 'checks', now: new Date() })).id
    const leased = await gw.agent(a, 'POST', '/v1/agent/lease', { facts: FACTS })
    tokenOfA = (leased.body.job as { lease_token: string }).lease_token
    secret = await gw.issueSecret('node-new')
    csr = await makeCsr(await nodeKey(), { name: 'CN=node-new' })
  })
  after(async () => {
    await gw?.close()
    await postgres?.stop()
  })

  const seen: { what: string; status: number }[] = []
  async function send(
    what: string,
    base: string,
    method: string,
    path: string,
    body: unknown,
    identity?: AgentIdentityFiles,
  ): Promise<HttpReply | 'handshake_refused'> {
    try {
      const reply = await httpsJson(base, method, path, body, {
        ca: gw.caPem,
        ...(identity ? { key: identity.keyPem, cert: identity.certificatePem } : {}),
      })
      seen.push({ what, status: reply.status })
      assert.ok(
        reply.status >= 200 && reply.status < 500,
        `${what}: ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`,
      )
      return reply
    } catch (error) {
      if (error instanceof assert.AssertionError) throw error
      // Without a client certificate the agent listener refuses the handshake: that is no 5xx.
      assert.ok(!identity && base === gw.agentUrl, `${what}: ${(error as Error).message}`)
      return 'handshake_refused'
    }
  }

  function pathsOf(pattern: string): string[] {
    if (!pattern.includes(':id'))
      return [pattern, `${pattern}/`, `${pattern}?x=%zz&y`, `${pattern}%`, `${pattern}/../..//x`]
    return [jobOfA, randomUUID(), 'not-a-uuid', '%zz', '%E0%A4%A', '%00', 'x'.repeat(128), '..', '%2F%2F'].map((id) =>
      pattern.replace(':id', id),
    )
  }

  it('text PostgreSQL cannot store (a NUL, an unpaired surrogate) in any field is a 400, and nothing is written', async () => {
    const complete = `/v1/agent/jobs/${jobOfA}/complete`
    const before = await gw.db.pool.query(
      'SELECT (SELECT count(*) FROM events) AS events, (SELECT status FROM jobs WHERE id = $1) AS job',
      [jobOfA],
    )
    for (const bad of ['x\u0000y', 'x\ud800y', 'x\udfffy', '\udc00\ud800']) {
      const failed = {
        lease_token: tokenOfA,
        status: 'failed',
        result: { error: { code: 'host_failed', message: bad } },
      }
      const checked = {
        lease_token: tokenOfA,
        status: 'succeeded',
        result: { checks: [{ id: 'host:br-netfilter', status: 'pass', detail: bad }] },
      }
      const requests: [string, string, string, unknown, AgentIdentityFiles | undefined][] = [
        [gw.agentUrl, 'POST', '/v1/agent/heartbeat', { facts: { ...FACTS, kernel: bad } }, a],
        [gw.agentUrl, 'POST', '/v1/agent/lease', { facts: FACTS, [bad]: 1 }, a],
        [gw.agentUrl, 'POST', complete, failed, a],
        [gw.agentUrl, 'POST', complete, checked, a],
        [gw.agentUrl, 'POST', `/v1/agent/jobs/${jobOfA}/heartbeat`, { lease_token: `${tokenOfA}${bad}` }, a],
        [
          gw.enrollUrl,
          'POST',
          '/v1/enroll',
          { node_id: `node-new${bad}`, enrollment_secret: secret, csr_pem: csr },
          undefined,
        ],
        [gw.enrollUrl, 'POST', '/v1/enroll', { node_id: 'node-new', enrollment_secret: bad, csr_pem: csr }, undefined],
      ]
      for (const [base, method, path, body, identity] of requests) {
        const reply = (await send(
          `${path} ${JSON.stringify(body).slice(0, 60)}`,
          base,
          method,
          path,
          body,
          identity,
        )) as HttpReply
        assert.equal(reply.status, 400, `${path}: ${JSON.stringify(reply.body)}`)
        assert.equal((reply.body.error as { code: string }).code, 'request_invalid')
      }
    }
    const after = await gw.db.pool.query(
      'SELECT (SELECT count(*) FROM events) AS events, (SELECT status FROM jobs WHERE id = $1) AS job',
      [jobOfA],
    )
    assert.deepEqual(after.rows, before.rows, 'no event, no job change')
  })

  it('agent listener: every route, every body, every method, three identities', async () => {
    for (const [who, identity] of [
      ['node-a', a],
      ['node-b (another node)', b],
      ['no certificate', undefined],
    ] as const) {
      for (const route of agentRoutes({} as never)) {
        for (const path of pathsOf(route.pattern)) {
          // The bodies in full for one identity; the others (refused at authentication or the handshake) get a sample.
          const bodies = who === 'node-a' ? brokenBodies() : brokenBodies().filter((_, i) => i % 7 === 0)
          for (const body of bodies)
            await send(
              `${who} ${route.method} ${path} ${JSON.stringify(body)?.slice(0, 40)}`,
              gw.agentUrl,
              route.method,
              path,
              body,
              identity,
            )
          const methods = METHODS.filter((m) => m !== route.method)
          for (const method of who === 'node-a' ? methods : methods.slice(0, 2))
            await send(`${who} ${method} ${path}`, gw.agentUrl, method, path, {}, identity)
        }
      }
      for (const path of [
        '/',
        '/v1',
        '/v1/agent',
        '/v1/enroll',
        '/%',
        '/v1/agent/jobs',
        '/metrics',
        `/${'z'.repeat(4000)}`,
      ]) {
        await send(`${who} GET ${path}`, gw.agentUrl, 'GET', path, undefined, identity)
      }
    }
    // Another node's job and replays of a real completion: 409, never a 500.
    const complete = `/v1/agent/jobs/${jobOfA}/complete`
    const result = {
      lease_token: tokenOfA,
      status: 'succeeded',
      result: { checks: [{ id: 'host:br-netfilter', status: 'pass', detail: 'ok' }] },
    }
    const stolen = await send('node-b completes node-a job', gw.agentUrl, 'POST', complete, result, b)
    assert.equal((stolen as HttpReply).status, 409)
    assert.equal(((await send('node-a completes', gw.agentUrl, 'POST', complete, result, a)) as HttpReply).status, 200)
    assert.equal(((await send('node-a replays', gw.agentUrl, 'POST', complete, result, a)) as HttpReply).status, 409)
    assert.equal(
      (
        (await send(
          'node-a job heartbeat after completion',
          gw.agentUrl,
          'POST',
          `/v1/agent/jobs/${jobOfA}/heartbeat`,
          { lease_token: tokenOfA },
          a,
        )) as HttpReply
      ).status,
      409,
    )
    const statuses = new Set(seen.map((s) => s.status))
    for (const expected of [400, 404, 405, 409, 413])
      assert.ok(statuses.has(expected), `some request got ${expected}: ${[...statuses].join(',')}`)
  })

  it('enrollment listener: every route, every body, every method, with and without a client certificate', async () => {
    for (const identity of [undefined, a]) {
      for (const route of enrollRoutes({} as never)) {
        for (const path of pathsOf(route.pattern)) {
          for (const body of brokenBodies())
            await send(
              `enroll ${route.method} ${path} ${JSON.stringify(body)?.slice(0, 40)}`,
              gw.enrollUrl,
              route.method,
              path,
              body,
              identity,
            )
          for (const method of METHODS.filter((m) => m !== route.method))
            await send(`enroll ${method} ${path}`, gw.enrollUrl, method, path, {}, identity)
        }
      }
    }
    // Replays of a real enrollment with other keys: the uniform 401.
    const valid = { node_id: 'node-new', enrollment_secret: secret, csr_pem: csr }
    assert.equal(((await send('enroll', gw.enrollUrl, 'POST', '/v1/enroll', valid)) as HttpReply).status, 200)
    const otherKey = { ...valid, csr_pem: await makeCsr(await nodeKey(), { name: 'CN=node-new' }) }
    assert.equal(
      ((await send('enroll replay, other key', gw.enrollUrl, 'POST', '/v1/enroll', otherKey)) as HttpReply).status,
      401,
    )
    assert.equal(
      (
        (await send('enroll with unknown fields', gw.enrollUrl, 'POST', '/v1/enroll', {
          ...valid,
          extra: 1,
        })) as HttpReply
      ).status < 500,
      true,
    )
  })
})
