// The gateway when its PostgreSQL goes away (issue 12, item 1): every route answers 503
// STATE_UNAVAILABLE with Retry-After (never a 500), /healthz names the database, the gateway
// recovers by itself, and an exhausted pool is a 503 too. The server is really stopped.
import assert from 'node:assert/strict'
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'

import { loadAgentConfig } from '../../../src/agent/config.js'
import { runAgent } from '../../../src/agent/run-loop.js'
import { stageIdentity } from '../../../src/agent/identity.js'
import { seededRng } from '../../../src/config/rng.js'
import { memoryLogger } from '../../../src/log/logger.js'
import { createJob } from '../../../src/store/scheduling/jobs.js'
import { embeddedServerPaths } from '../../../src/store/embedded/paths.js'
import { readPostmasterPid } from '../../../src/store/embedded/postmaster.js'
import { stopEmbeddedServer } from '../../../src/store/embedded/server.js'
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
const JOB_ID = '0b7c9a52-7f0e-4a55-9d1f-3f4a8e1c2b3d'

function code(reply: HttpReply): string | undefined {
  return (reply.body.error as { code?: string } | undefined)?.code
}

function httpGet(url: string): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    httpRequest(url, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
          headers: res.headers,
        }),
      )
    })
      .on('error', reject)
      .end()
  })
}

function assertUnavailable(reply: HttpReply, what: string): void {
  assert.equal(reply.status, 503, `${what}: ${reply.status} ${JSON.stringify(reply.body)}`)
  assert.equal(code(reply), 'state_unavailable', what)
  assert.match(String(reply.headers['retry-after']), /^\d+$/, `${what}: Retry-After`)
}

describe('gateway faults: the database goes away', function () {
  this.timeout(180_000)
  let postgres: DisposablePostgres
  let gw: TestGateway
  let agent: AgentIdentityFiles
  before(async () => {
    postgres = await startDisposablePostgres()
  })
  after(async () => {
    await postgres?.stop()
  })
  beforeEach(async () => {
    gw = await startTestGateway({ postgresUrl: postgres.url, tuning: { databaseCheckMs: 100_000 } })
    await gw.declareNode('node-db')
    agent = await gw.enroll('node-db', await gw.issueSecret('node-db'))
  })
  afterEach(async () => {
    await gw?.close()
  })

  it('answers 503 STATE_UNAVAILABLE with Retry-After on every route, /healthz says the database is down, and recovers by itself', async () => {
    await gw.declareNode('node-new')
    const secret = await gw.issueSecret('node-new')
    const csr = await makeCsr(await nodeKey(), { name: 'CN=node-new' })
    const before = await (await fetch(`${gw.metricsUrl}/metrics`)).text()
    const nodesGauge = before.split('\n').filter((line) => line.startsWith('fleetkit_nodes{'))
    assert.ok(nodesGauge.length > 0, before)
    await postgres.halt()
    try {
      // The first request meets the dead connection itself (no probe ran yet): still a 503.
      assertUnavailable(await gw.agent(agent, 'POST', '/v1/agent/heartbeat', { facts: FACTS }), 'heartbeat (first)')
      assert.equal(gw.gateway!.databaseAvailable(), false, 'the failed request marked the database down')
      assertUnavailable(await gw.agent(agent, 'POST', '/v1/agent/heartbeat', { facts: FACTS }), 'heartbeat')
      assertUnavailable(await gw.agent(agent, 'POST', '/v1/agent/lease', { facts: FACTS }), 'lease')
      assertUnavailable(
        await gw.agent(agent, 'POST', `/v1/agent/jobs/${JOB_ID}/heartbeat`, { lease_token: 'x'.repeat(43) }),
        'job heartbeat',
      )
      assertUnavailable(
        await gw.agent(agent, 'POST', `/v1/agent/jobs/${JOB_ID}/complete`, {
          lease_token: 'x'.repeat(43),
          status: 'succeeded',
          result: {},
        }),
        'job complete',
      )
      assertUnavailable(await gw.agent(agent, 'POST', '/v1/agent/certificate/renew', { csr_pem: csr }), 'renew')
      assertUnavailable(await gw.agent(agent, 'GET', '/v1/agent/identity'), 'identity')
      assertUnavailable(await gw.enrollPost({ node_id: 'node-new', enrollment_secret: secret, csr_pem: csr }), 'enroll')
      for (const [what, reply] of [
        ['agent /healthz', await gw.agent(agent, 'GET', '/healthz')],
        ['enroll /healthz', await httpsHealth(gw)],
      ] as const) {
        assertUnavailable(reply, what)
        assert.equal(reply.body.database, 'down', what)
      }
      const metricsHealth = await httpGet(`${gw.metricsUrl}/healthz`)
      assert.equal(metricsHealth.status, 503)
      assert.equal(metricsHealth.body.database, 'down')
      // /metrics says so itself (FleetkitDatabaseUnavailable reads it: no batch write fails while every
      // heartbeat is answered 503 at once), and still serves the gauges read from the database.
      const down = await (await fetch(`${gw.metricsUrl}/metrics`)).text()
      assert.ok(down.split('\n').includes('fleetkit_gateway_database_up 0'), down)
      for (const line of nodesGauge) assert.ok(down.split('\n').includes(line), `${line} is still served`)
      // Malformed requests are still refused for what they are, database or not.
      assert.equal((await gw.agent(agent, 'PUT', '/v1/agent/heartbeat', {})).status, 405)
      assert.equal((await gw.agent(agent, 'GET', '/nope')).status, 404)
    } finally {
      await postgres.resume()
    }
    await gw.gateway!.checkDatabase()
    assert.equal(gw.gateway!.databaseAvailable(), true)
    const health = await httpGet(`${gw.metricsUrl}/healthz`)
    assert.deepEqual([health.status, health.body.database], [200, 'up'])
    const up = await (await fetch(`${gw.metricsUrl}/metrics`)).text()
    assert.ok(up.split('\n').includes('fleetkit_gateway_database_up 1'), up)
    assert.equal((await gw.agent(agent, 'POST', '/v1/agent/heartbeat', { facts: FACTS })).status, 200)
    assert.equal(
      (await gw.enrollPost({ node_id: 'node-new', enrollment_secret: secret, csr_pem: csr })).status,
      200,
      'the secret was not used up by the refused attempt',
    )
  })

  it('an exhausted pool answers 503 STATE_UNAVAILABLE (pool_exhausted) while /healthz still finds the database up', async () => {
    let small: pg.Pool | undefined
    const second = await startTestGateway({
      postgresUrl: postgres.url,
      pool: (db) => {
        // One connection, kept while idle (idleTimeoutMillis 0), and a short wait for it.
        small = new pg.Pool({ connectionString: db.url, max: 1, connectionTimeoutMillis: 300, idleTimeoutMillis: 0 })
        small.on('error', () => undefined)
        return small
      },
    })
    try {
      // Open the one connection first (retrying: under load a fresh connection can take more than the
      // 300 ms), so the enrollment below never waits on a connect and only the held connection exhausts it.
      await eventually('the small pool to open its connection', async () => {
        const client = await small!.connect().catch(() => undefined)
        client?.release()
        return client !== undefined
      })
      await second.declareNode('node-pool')
      const identity = await second.enroll('node-pool', await second.issueSecret('node-pool'))
      const held = await small!.connect()
      try {
        const reply = await second.agent(identity, 'POST', '/v1/agent/heartbeat', { facts: FACTS })
        assertUnavailable(reply, 'heartbeat with the pool exhausted')
        assert.equal(second.gateway!.databaseAvailable(), true, 'a busy pool is not a dead database')
        assert.equal((await httpGet(`${second.metricsUrl}/healthz`)).status, 200)
      } finally {
        held.release()
      }
      assert.equal((await second.agent(identity, 'POST', '/v1/agent/heartbeat', { facts: FACTS })).status, 200)
    } finally {
      await second.close()
      await small?.end()
    }
  })

  it('the agent logs the 503 at warn, backs off, and a job completion that got a 5xx is kept and retried', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleetkit-dbfault-agent-'))
    try {
      await stageIdentity(join(dir, 'pki'), agent.keyPem, agent.certificatePem, agent.caPem)
      await writeFile(join(dir, 'ca.pem'), gw.caPem)
      await writeFile(
        join(dir, 'agent.env'),
        [
          'FLEETKIT_NODE_ID=node-db',
          `FLEETKIT_GATEWAY_URL=${gw.agentUrl}`,
          `FLEETKIT_ENROLL_URL=${gw.enrollUrl}`,
          `FLEETKIT_GATEWAY_CA_FILE=${join(dir, 'ca.pem')}`,
          `FLEETKIT_AGENT_PKI_DIR=${join(dir, 'pki')}`,
          `FLEETKIT_HOST_ROOT=${dir}`,
          'FLEETKIT_AGENT_HEARTBEAT_SECONDS=1',
          '',
        ].join('\n'),
      )
      const config = loadAgentConfig({ env: { FLEETKIT_AGENT_CONFIG: join(dir, 'agent.env') }, flags: {} })
      const log = memoryLogger('agent', 'debug')
      const job = await createJob(gw.db.pool, { nodeId: 'node-db', kind: 'checks', payload: {}, now: new Date() })
      const controller = new AbortController()
      let halted = false
      let resumed = false
      // The host checks stop the database before the result is sent: the completion meets a 503.
      const runChecks = async () => {
        await postgres.halt()
        halted = true
        return [{ id: 'host:br-netfilter', status: 'pass' as const, detail: 'loaded' }]
      }
      const sleep = async (_ms: number) => {
        await new Promise((resolve) => setTimeout(resolve, 20))
        const retries = log.lines.filter((l) => l.msg === 'job_completion_retry').length
        if (halted && !resumed && retries >= 2 && log.lines.some((l) => l.msg === 'gateway_unavailable')) {
          resumed = true
          await postgres.resume()
          await gw.gateway!.checkDatabase()
        }
        if (log.lines.some((l) => l.msg === 'job_completed')) controller.abort()
      }
      await runAgent(config, {
        log,
        clock: { now: () => new Date() },
        rng: seededRng('dbfault'),
        host: { root: dir, run: fakeRunner({}) },
        signal: controller.signal,
        sleep,
        runChecks,
      })
      const unavailable = log.lines.find((l) => l.msg === 'gateway_unavailable')
      assert.ok(unavailable, `no gateway_unavailable line: ${JSON.stringify(log.lines.slice(-8))}`)
      assert.equal(unavailable.level, 'warn')
      assert.equal(unavailable.status, 503)
      assert.equal(unavailable.code, 'state_unavailable')
      assert.ok(Number(unavailable.retry_in_ms) >= 5000, 'waits at least the Retry-After')
      const retry = log.lines.find((l) => l.msg === 'job_completion_retry')
      assert.ok(retry, 'the completion was retried')
      assert.equal(retry.level, 'warn')
      assert.equal(retry.http_status, 503)
      const completed = log.lines.find((l) => l.msg === 'job_completed')
      assert.equal(completed?.http_status, 200, JSON.stringify(log.lines.slice(-8)))
      const { rows } = await gw.db.pool.query<{ status: string }>('SELECT status FROM jobs WHERE id = $1', [job.id])
      assert.equal(rows[0]!.status, 'succeeded', 'the result reached the database after it came back')
    } finally {
      if (!(await isUp(postgres))) await postgres.resume()
      await rm(dir, { recursive: true, force: true })
    }
  })
})

async function isUp(server: DisposablePostgres): Promise<boolean> {
  const client = new pg.Client({ connectionString: server.url, connectionTimeoutMillis: 1000 })
  client.on('error', () => undefined)
  try {
    await client.connect()
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => undefined)
  }
}

/** GET /healthz on the enrollment listener, given up after 5 s (a hung probe must not hang the test). */
function httpsHealth(gw: TestGateway): Promise<HttpReply> {
  return Promise.race([
    httpsJson(gw.enrollUrl, 'GET', '/healthz', undefined, { ca: gw.caPem }),
    new Promise<HttpReply>((_, reject) =>
      setTimeout(() => reject(new Error('no /healthz answer within 5 s')), 5000).unref(),
    ),
  ])
}

describe('gateway faults: the embedded database dies', function () {
  this.timeout(360_000)
  let postgres: DisposablePostgres
  before(async () => {
    postgres = await startDisposablePostgres()
  })
  after(async () => {
    await postgres?.stop()
  })

  it('`gateway serve` on the embedded default answers 503 while it is gone and starts it again by itself', async () => {
    // DATABASE_URL empty: the gateway process starts (and must restart) its own embedded server.
    const stateDir = await mkdtemp(join(tmpdir(), 'fleetkit-state-'))
    // The postgres user must reach it (mkdtemp makes it 0700).
    await chmod(stateDir, 0o755)
    // Every stage is bounded and named, so a slow one fails with where it waited and what the gateway
    // logged (a bare mocha timeout says neither). Waits, not limits: on the whole test command's load
    // the first start (initdb) and the two failed probes (2 s apart) are slow.
    const stages: string[] = []
    const started = Date.now()
    let gw: TestGateway | undefined
    const stage = async <T>(what: string, limitMs: number, work: () => Promise<T>): Promise<T> => {
      stages.push(`${what} from ${((Date.now() - started) / 1000).toFixed(1)} s`)
      let timer: NodeJS.Timeout | undefined
      try {
        return await Promise.race([
          work(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`not done within ${limitMs / 1000} s`)), limitMs)
          }),
        ])
      } catch (error) {
        const logs = (gw?.logs ?? []).slice(-8).join('\n')
        throw new Error(`${what}: ${(error as Error).message} (stages: ${stages.join(', ')})\n${logs}`, {
          cause: error,
        })
      } finally {
        clearTimeout(timer)
      }
    }
    try {
      gw = await stage('gateway start', 120_000, () =>
        startTestGateway({
          postgresUrl: postgres.url,
          mode: 'process',
          env: { DATABASE_URL: '', FLEETKIT_STATE_DIR: stateDir },
        }),
      )
      const running = gw
      assert.equal((await httpGet(`${running.metricsUrl}/healthz`)).body.database, 'up')
      const { dataDir } = embeddedServerPaths(stateDir)
      const before = await readPostmasterPid(dataDir)
      assert.ok(before, 'the embedded server runs')
      process.kill(before.pid, 'SIGKILL')
      const down = await stage('a 503 from /healthz', 90_000, () =>
        eventually(
          '/healthz to report the database down',
          async () => {
            const reply = await httpsHealth(running).catch(() => undefined)
            return reply?.status === 503 ? reply : undefined
          },
          { timeoutMs: 90_000, intervalMs: 50 },
        ),
      )
      assert.equal(code(down), 'state_unavailable')
      assert.equal(down.body.database, 'down')
      await stage('the restart (a 200 from /healthz)', 90_000, () =>
        eventually(
          'the gateway to restart the embedded server',
          async () => (await httpsHealth(running).catch(() => undefined))?.status === 200,
          { timeoutMs: 90_000, intervalMs: 200 },
        ),
      )
      const after = await readPostmasterPid(dataDir)
      assert.ok(after && after.pid !== before.pid, 'a new postmaster')
      const lines = running.logs.map((line) => JSON.parse(line) as { msg: string; level: string })
      assert.ok(
        lines.some((l) => l.msg === 'database_restarting'),
        'the restart is logged',
      )
      assert.ok(
        lines.some((l) => l.msg === 'database_available'),
        'the recovery is logged',
      )
      // SIGTERM must end it: a gateway that hangs in shutdown is one systemd kills after 90 s.
      await stage('the gateway to exit on SIGTERM', 30_000, () => running.close())
    } finally {
      if (gw?.child && gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGKILL')
      await stage('the embedded server to stop', 60_000, () => stopEmbeddedServer(stateDir)).catch(() => undefined)
      await rm(stateDir, { recursive: true, force: true })
    }
  })
})
