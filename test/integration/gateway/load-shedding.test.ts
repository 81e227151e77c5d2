// Load shedding (issue 12, item 7): with the overload signal injected (no timing), the gateway answers
// 503 gateway_overloaded with Retry-After and writes nothing; enrollment is shed first, heartbeats and
// renewals last; the in-flight cap sheds too; the agent's enrollment waits Retry-After plus jitter.
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { connect } from 'node:tls'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { loadAgentConfig } from '../../../src/agent/config.js'
import { enroll as agentEnroll } from '../../../src/agent/enroll.js'
import { runAgent } from '../../../src/agent/run-loop.js'
import { fixedClock } from '../../../src/config/clock.js'
import { unitIntervalSequence } from '../../../src/config/rng.js'
import { DEFAULT_LOAD_SHEDDER_TUNING } from '../../../src/gateway/load/load-shedder.js'
import { memoryLogger } from '../../../src/log/logger.js'
import { eventually } from '../../support/eventually.js'
import { fakeRunner } from '../../support/fake-host.js'
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

function assertShed(reply: HttpReply, retryAfter: number, reason: string, what: string): void {
  assert.equal(reply.status, 503, `${what}: ${reply.status} ${JSON.stringify(reply.body)}`)
  assert.equal((reply.body.error as { code?: string }).code, 'gateway_overloaded', what)
  assert.equal(reply.body.reason, reason, what)
  assert.equal(reply.headers['retry-after'], String(retryAfter), `${what}: Retry-After`)
}

function metricsText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    httpRequest(new URL('/metrics', url), (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    })
      .on('error', reject)
      .end()
  })
}

describe('gateway load shedding (overload signal injected)', function () {
  this.timeout(120_000)
  let postgres: DisposablePostgres
  let gw: TestGateway
  let agent: AgentIdentityFiles
  let delay = 0
  /** Move the gateway to the level a delay gives, sampling until it settles (hysteresis needs several calm samples). */
  const settle = (ms: number): number => {
    delay = ms
    let level = gw.gateway!.sampleLoad()
    for (let i = 0; i < 10; i++) level = gw.gateway!.sampleLoad()
    return level
  }
  before(async () => {
    postgres = await startDisposablePostgres()
  })
  after(async () => {
    await postgres?.stop()
  })
  beforeEach(async () => {
    delay = 0
    gw = await startTestGateway({
      postgresUrl: postgres.url,
      eventLoopDelayMs: () => delay,
      tuning: {
        loadShedding: { ...DEFAULT_LOAD_SHEDDER_TUNING, sampleMs: 3_600_000, maxInFlight: { enroll: 2, agent: 64 } },
      },
    })
    await gw.declareNode('node-a')
    agent = await gw.enroll('node-a', await gw.issueSecret('node-a'))
    assert.equal((await gw.agent(agent, 'POST', '/v1/agent/heartbeat', { facts: FACTS })).status, 200)
    await gw.flushHeartbeats()
  })
  afterEach(async () => {
    await gw?.close()
  })

  it('level 1 sheds enrollment first (nothing written), while heartbeats and leases are served', async () => {
    await gw.declareNode('node-b')
    const secret = await gw.issueSecret('node-b')
    assert.equal(settle(200), 1)
    const key = await nodeKey()
    const shed = await gw.enrollPost({
      node_id: 'node-b',
      enrollment_secret: secret,
      csr_pem: await makeCsr(key, { name: 'CN=node-b' }),
    })
    assertShed(shed, 10, 'event_loop_delay', 'enrollment at level 1')
    // Nothing was done: the secret is unused, the node still provisioning, no certificate, no event.
    const {
      rows: [node],
    } = await gw.db.pool.query<{ status: string; used: Date | null }>(
      'SELECT status, enrollment_secret_used_at AS used FROM nodes WHERE id = $1',
      ['node-b'],
    )
    assert.deepEqual(node, { status: 'provisioning', used: null })
    assert.equal((await gw.db.pool.query('SELECT 1 FROM node_certificates WHERE node_id = $1', ['node-b'])).rowCount, 0)
    assert.equal(
      (
        await gw.db.pool.query(
          "SELECT 1 FROM events WHERE node_id = $1 AND kind IN ('node_enrolled', 'enrollment_refused')",
          ['node-b'],
        )
      ).rowCount,
      0,
    )
    assert.equal((await gw.agent(agent, 'POST', '/v1/agent/heartbeat', { facts: FACTS })).status, 200)
    assert.equal((await gw.agent(agent, 'POST', '/v1/agent/lease', { facts: FACTS })).status, 200)
    // The enrollment listener's /healthz is shed last: still answered.
    assert.equal((await httpsJson(gw.enrollUrl, 'GET', '/healthz', undefined, { ca: gw.caPem })).status, 200)
    // Calm again (hysteresis: several samples below half the threshold): the same request enrolls.
    assert.equal(settle(0), 0)
    const enrolled = await gw.enrollPost({
      node_id: 'node-b',
      enrollment_secret: secret,
      csr_pem: await makeCsr(key, { name: 'CN=node-b' }),
    })
    assert.equal(enrolled.status, 200, JSON.stringify(enrolled.body))
    const metrics = await metricsText(gw.metricsUrl)
    assert.match(
      metrics,
      /fleetkit_gateway_requests_shed_total\{listener="enroll",priority="first",reason="event_loop_delay"\} 1/,
    )
  })

  it('level 2 sheds leases but not heartbeats; level 3 sheds heartbeats too, and a shed heartbeat writes nothing', async () => {
    const before = (
      await gw.db.pool.query<{ seen: Date }>('SELECT last_seen_at AS seen FROM nodes WHERE id = $1', ['node-a'])
    ).rows[0]!.seen
    assert.equal(settle(600), 2)
    assertShed(
      await gw.agent(agent, 'POST', '/v1/agent/lease', { facts: FACTS }),
      5,
      'event_loop_delay',
      'lease at level 2',
    )
    assert.equal((await gw.agent(agent, 'POST', '/v1/agent/heartbeat', { facts: FACTS })).status, 200)
    await gw.flushHeartbeats()
    const afterBeat = (
      await gw.db.pool.query<{ seen: Date }>('SELECT last_seen_at AS seen FROM nodes WHERE id = $1', ['node-a'])
    ).rows[0]!.seen
    assert.ok(afterBeat.getTime() >= before.getTime())
    assert.equal(settle(2500), 3)
    assertShed(
      await gw.agent(agent, 'POST', '/v1/agent/heartbeat', { facts: FACTS }),
      2,
      'event_loop_delay',
      'heartbeat at level 3',
    )
    assertShed(
      await gw.agent(agent, 'POST', '/v1/agent/certificate/renew', { csr_pem: 'x' }),
      2,
      'event_loop_delay',
      'renewal at level 3',
    )
    await gw.flushHeartbeats()
    const afterShed = (
      await gw.db.pool.query<{ seen: Date }>('SELECT last_seen_at AS seen FROM nodes WHERE id = $1', ['node-a'])
    ).rows[0]!.seen
    assert.equal(afterShed.getTime(), afterBeat.getTime(), 'a shed heartbeat is not recorded')
    // Down one level at a time, and only after calm samples: 1200 ms is under 2000 but not under half of it.
    assert.equal(settle(1200), 3)
    assert.equal(settle(900), 2)
  })

  it('the in-flight cap sheds enrollment while a request is in progress, and keeps room for /healthz', async () => {
    // A request whose body never finishes stays in progress; with maxInFlight.enroll = 2, enrollment may fill 1.
    const url = new URL(gw.enrollUrl)
    const socket = connect({ host: url.hostname, port: Number(url.port), ca: gw.caPem, servername: 'localhost' })
    await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject))
    socket.write(
      'POST /v1/enroll HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"node_id":',
    )
    try {
      await eventually('the slow request to be in flight', () => gw.gateway!.inFlight('enroll') === 1)
      const key = await nodeKey()
      assertShed(
        await gw.enrollPost({
          node_id: 'node-x',
          enrollment_secret: 'x'.repeat(43),
          csr_pem: await makeCsr(key, { name: 'CN=node-x' }),
        }),
        10,
        'in_flight',
        'enrollment over the cap',
      )
      assert.equal((await httpsJson(gw.enrollUrl, 'GET', '/healthz', undefined, { ca: gw.caPem })).status, 200)
    } finally {
      socket.destroy()
    }
    await eventually('the slow request to end', () => gw.gateway!.inFlight('enroll') === 0)
  })

  it('the agent enrolls through a 503: it waits Retry-After plus jitter, then sends the same request again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleetkit-shed-agent-'))
    try {
      await gw.declareNode('node-c')
      await writeFile(join(dir, 'secret'), await gw.issueSecret('node-c'), { mode: 0o600 })
      await writeFile(join(dir, 'ca.pem'), gw.caPem)
      await mkdir(join(dir, 'pki'), { mode: 0o700 })
      await writeFile(
        join(dir, 'agent.env'),
        [
          'FLEETKIT_NODE_ID=node-c',
          `FLEETKIT_ENROLL_URL=${gw.enrollUrl}`,
          `FLEETKIT_GATEWAY_URL=${gw.agentUrl}`,
          `FLEETKIT_GATEWAY_CA_FILE=${join(dir, 'ca.pem')}`,
          `FLEETKIT_AGENT_PKI_DIR=${join(dir, 'pki')}`,
          `FLEETKIT_ENROLLMENT_SECRET_FILE=${join(dir, 'secret')}`,
          '',
        ].join('\n'),
      )
      const config = loadAgentConfig({ env: { FLEETKIT_AGENT_CONFIG: join(dir, 'agent.env') }, flags: {} })
      assert.equal(settle(200), 1)
      const slept: number[] = []
      const log = memoryLogger('agent', 'debug')
      const result = await agentEnroll(config, {
        log,
        rng: unitIntervalSequence([0.5]),
        // The wait is where the gateway calms down; no real time passes.
        sleep: async (ms) => {
          slept.push(ms)
          settle(0)
        },
      })
      assert.equal(result.outcome, 'enrolled')
      // Retry-After 10 s plus half of the jitter range (up to half of 10 s): 12.5 s.
      assert.deepEqual(slept, [12_500])
      const throttled = log.lines.find((l) => l.msg === 'enroll_throttled')
      assert.equal(throttled?.level, 'warn')
      assert.equal(throttled?.status, 503)
      assert.equal(throttled?.code, 'gateway_overloaded')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('a shed urgent renewal is tried again after Retry-After plus jitter, not at once (injected clock)', async () => {
    // Past 90% of its life the agent renews at once and, after a failure, every 30 s at most; shed, it
    // must wait what the gateway asks first. Its sleeps move the clock the gateway reads too.
    const virtual = fixedClock(new Date())
    let level3 = true
    const second = await startTestGateway({
      postgresUrl: postgres.url,
      agentCertLifetimeSeconds: 40,
      clock: virtual,
      eventLoopDelayMs: () => (level3 ? 2500 : 0),
      tuning: { loadShedding: { ...DEFAULT_LOAD_SHEDDER_TUNING, sampleMs: 3_600_000 } },
    })
    const dir = await mkdtemp(join(tmpdir(), 'fleetkit-shed-renew-'))
    try {
      await second.declareNode('node-r')
      const identity = await second.enroll('node-r', await second.issueSecret('node-r'))
      const { stageIdentity } = await import('../../../src/agent/identity.js')
      await stageIdentity(join(dir, 'pki'), identity.keyPem, identity.certificatePem, identity.caPem)
      await writeFile(join(dir, 'ca.pem'), second.caPem)
      await writeFile(
        join(dir, 'agent.env'),
        [
          'FLEETKIT_NODE_ID=node-r',
          `FLEETKIT_GATEWAY_URL=${second.agentUrl}`,
          `FLEETKIT_ENROLL_URL=${second.enrollUrl}`,
          `FLEETKIT_GATEWAY_CA_FILE=${join(dir, 'ca.pem')}`,
          `FLEETKIT_AGENT_PKI_DIR=${join(dir, 'pki')}`,
          `FLEETKIT_HOST_ROOT=${dir}`,
          'FLEETKIT_AGENT_HEARTBEAT_SECONDS=1',
          // The next check after a failure comes at most this long after it: before the certificate's end (9 s left).
          'FLEETKIT_AGENT_RENEW_CHECK_SECONDS=4',
          '',
        ].join('\n'),
      )
      const config = loadAgentConfig({ env: { FLEETKIT_AGENT_CONFIG: join(dir, 'agent.env') }, flags: {} })
      // 31 s after issuance: 91% of the 100 s window (40 s + 60 s backdating), still valid for TLS and the gateway.
      virtual.advance(31_000)
      second.gateway!.sampleLoad()
      const log = memoryLogger('agent', 'debug', () => virtual.now())
      const controller = new AbortController()
      const sleep = async (ms: number) => {
        virtual.advance(Math.max(ms, 0))
        await new Promise((resolve) => setImmediate(resolve))
        if (log.lines.some((line) => line.msg === 'renewal_failed') && level3) {
          level3 = false
          for (let i = 0; i < 12; i++) second.gateway!.sampleLoad()
        }
        if (log.lines.some((line) => line.msg === 'certificate_renewed') || log.lines.length > 200) controller.abort()
      }
      await runAgent(config, {
        log,
        clock: virtual,
        rng: unitIntervalSequence([0.5]),
        host: { root: dir, run: fakeRunner({}) },
        signal: controller.signal,
        sleep,
      })
      const failed = log.lines.find((line) => line.msg === 'renewal_failed')
      assert.ok(failed, `no shed renewal: ${JSON.stringify(log.lines.slice(-6))}`)
      assert.equal(failed.decision, 'urgent')
      // Retry-After 2 s plus half of the jitter range (at least a second): 2.5 s.
      assert.equal(failed.retry_in_ms, 2500)
      const renewed = log.lines.find((line) => line.msg === 'certificate_renewed')
      assert.ok(renewed, `no renewal after the shed one: ${JSON.stringify(log.lines.slice(-6))}`)
      assert.ok(
        Date.parse(renewed.time as string) - Date.parse(failed.time as string) >= 2500,
        'the retry waited the Retry-After and its jitter',
      )
      assert.ok(
        !log.lines.some((line) => line.msg === 'identity_recovered'),
        'renewed before the certificate ran out (no recovery needed)',
      )
      const shedBeat = log.lines.find((line) => line.msg === 'gateway_unavailable')
      assert.equal(shedBeat?.code, 'gateway_overloaded', 'the shed heartbeat is logged at warn with its code')
    } finally {
      await second.close()
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('a shed recovery (enrollment listener, shed first) waits Retry-After plus jitter, then recovers (injected clock)', async () => {
    const virtual = fixedClock(new Date())
    let level1 = true
    const second = await startTestGateway({
      postgresUrl: postgres.url,
      agentCertLifetimeSeconds: 40,
      clock: virtual,
      eventLoopDelayMs: () => (level1 ? 200 : 0),
      tuning: { loadShedding: { ...DEFAULT_LOAD_SHEDDER_TUNING, sampleMs: 3_600_000 } },
    })
    const dir = await mkdtemp(join(tmpdir(), 'fleetkit-shed-recover-'))
    try {
      await second.declareNode('node-e')
      const identity = await second.enroll('node-e', await second.issueSecret('node-e'))
      const { stageIdentity } = await import('../../../src/agent/identity.js')
      await stageIdentity(join(dir, 'pki'), identity.keyPem, identity.certificatePem, identity.caPem)
      await writeFile(join(dir, 'ca.pem'), second.caPem)
      await writeFile(
        join(dir, 'agent.env'),
        [
          'FLEETKIT_NODE_ID=node-e',
          `FLEETKIT_GATEWAY_URL=${second.agentUrl}`,
          `FLEETKIT_ENROLL_URL=${second.enrollUrl}`,
          `FLEETKIT_GATEWAY_CA_FILE=${join(dir, 'ca.pem')}`,
          `FLEETKIT_AGENT_PKI_DIR=${join(dir, 'pki')}`,
          `FLEETKIT_HOST_ROOT=${dir}`,
          'FLEETKIT_AGENT_HEARTBEAT_SECONDS=1',
          'FLEETKIT_AGENT_RENEW_CHECK_SECONDS=10',
          '',
        ].join('\n'),
      )
      const config = loadAgentConfig({ env: { FLEETKIT_AGENT_CONFIG: join(dir, 'agent.env') }, flags: {} })
      // Past the certificate's end on both clocks that judge it (the agent's and the gateway's).
      virtual.advance(45_000)
      second.gateway!.sampleLoad()
      const log = memoryLogger('agent', 'debug', () => virtual.now())
      const controller = new AbortController()
      const sleep = async (ms: number) => {
        virtual.advance(Math.max(ms, 0))
        await new Promise((resolve) => setImmediate(resolve))
        if (log.lines.some((line) => line.msg === 'recovery_failed') && level1) {
          level1 = false
          for (let i = 0; i < 12; i++) second.gateway!.sampleLoad()
        }
        if (log.lines.some((line) => line.msg === 'identity_recovered') || log.lines.length > 200) controller.abort()
      }
      await runAgent(config, {
        log,
        clock: virtual,
        rng: unitIntervalSequence([0.5]),
        host: { root: dir, run: fakeRunner({}) },
        signal: controller.signal,
        sleep,
      })
      const failed = log.lines.find((line) => line.msg === 'recovery_failed')
      assert.ok(failed, `no shed recovery: ${JSON.stringify(log.lines.slice(-6))}`)
      // Retry-After 10 s (enrollment and recovery are shed first) plus half of the jitter range (up to 5 s).
      assert.equal(failed.retry_in_ms, 12_500)
      const recovered = log.lines.find((line) => line.msg === 'identity_recovered')
      assert.ok(recovered, `no recovery after the shed one: ${JSON.stringify(log.lines.slice(-6))}`)
      assert.ok(Date.parse(recovered.time as string) - Date.parse(failed.time as string) >= 12_500)
    } finally {
      await second.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
