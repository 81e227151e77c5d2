// A node that dies: a real fleetkit-agent killed with SIGKILL becomes unhealthy, then lost, on the
// sweep's database clock; its leased job is fenced (a late completion gets 409 and writes nothing),
// its allocations released, one node_lost event however often the sweep replays, and a restarted
// agent is refused with 403 node_lost and its cleanup list. Two gateways with skewed clocks lease a
// job once and only one of them sweeps.
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'

import { fixedClock } from '../../../src/config/clock.js'
import type { GatewayWithControls } from '../../../src/gateway/controls.js'
import { startGatewayWithControls } from '../../../src/gateway/gateway.js'
import { runSweep } from '../../../src/lifecycle/node/sweep.js'
import { silentLogger } from '../../../src/log/logger.js'
import { loadPkiSet } from '../../../src/pki/pki-set.js'
import { listAllocations, reserveAllocation } from '../../../src/store/scheduling/allocations.js'
import { listEvents } from '../../../src/store/events.js'
import { createJob, getJob } from '../../../src/store/scheduling/jobs.js'
import { recordNodeCapacity } from '../../../src/store/nodes/node-lifecycle.js'
import { getNode } from '../../../src/store/nodes/nodes.js'
import { admitNode } from '../../../src/lifecycle/node/node-admit.js'
import { copyAgentBundle } from '../../support/agent-bundle.js'
import { eventually } from '../../support/eventually.js'
import { HEALTHY_FILES, makeFakeRoot } from '../../support/fake-host.js'
import { makeCsr, nodeKey } from '../../support/pki.js'
import { httpsJson, startTestGateway, TEST_TUNING, type TestGateway } from '../../support/gateway.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'
import { runProcess, startProcess, type RunningProcess } from '../../support/process.js'

const agentNode = process.env.FLEETKIT_AGENT_TEST_NODE || process.execPath
const THRESHOLDS = { unhealthyAfterSeconds: 90, lostAfterSeconds: 300 }
const CHECKS_OK = { checks: [{ id: 'host:br-netfilter', status: 'pass', detail: 'loaded' }] }
const code = (reply: { body: Record<string, unknown> }) => (reply.body.error as { code?: string } | undefined)?.code

describe('lost nodes and the sweep (real agent, real gateway, real PostgreSQL)', function () {
  this.timeout(180_000)
  let postgres: DisposablePostgres
  before(async () => {
    postgres = await startDisposablePostgres()
  })
  after(async () => {
    await postgres?.stop()
  })

  describe('an agent killed with SIGKILL', () => {
    const NODE = 'lost-1'
    let gw: TestGateway
    let dir: string
    let fakeRoot: string
    let bundle: string
    let envFile: string
    let agent: RunningProcess | undefined
    const silence = (seconds: number) =>
      gw.db.pool.query('UPDATE nodes SET last_seen_at = now() - make_interval(secs => $2) WHERE id = $1', [
        NODE,
        seconds,
      ])
    const startAgent = () =>
      startProcess(agentNode, [bundle, 'run'], {
        env: { PATH: process.env.PATH ?? '', FLEETKIT_AGENT_CONFIG: envFile },
      })

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'fleetkit-lost-'))
      bundle = await copyAgentBundle(join(dir, 'fleetkit-agent'))
      fakeRoot = await makeFakeRoot(HEALTHY_FILES)
      // The gateway's own sweeper stays off: the test runs each sweep itself, several times.
      gw = await startTestGateway({ postgresUrl: postgres.url, sweep: null })
      await gw.declareNode(NODE)
      await writeFile(join(dir, 'gateway-ca.pem'), gw.caPem)
      await writeFile(join(dir, 'enrollment-secret'), `${await gw.issueSecret(NODE)}\n`, { mode: 0o600 })
      envFile = join(dir, 'agent.env')
      await writeFile(
        envFile,
        [
          `FLEETKIT_NODE_ID=${NODE}`,
          `FLEETKIT_GATEWAY_URL=${gw.agentUrl}`,
          `FLEETKIT_ENROLL_URL=${gw.enrollUrl}`,
          `FLEETKIT_GATEWAY_CA_FILE=${join(dir, 'gateway-ca.pem')}`,
          `FLEETKIT_ENROLLMENT_SECRET_FILE=${join(dir, 'enrollment-secret')}`,
          `FLEETKIT_AGENT_PKI_DIR=${join(dir, 'pki')}`,
          `FLEETKIT_HOST_ROOT=${fakeRoot}`,
          'FLEETKIT_DATA_MOUNT=/srv/fleet data',
          'FLEETKIT_AGENT_MIN_FREE_GB=0.001',
          'FLEETKIT_AGENT_HEARTBEAT_SECONDS=1',
          '',
        ].join('\n'),
      )
      const enrolled = await runProcess(agentNode, [bundle, 'enroll'], {
        env: { PATH: process.env.PATH ?? '', FLEETKIT_AGENT_CONFIG: envFile },
      })
      assert.equal(enrolled.code, 0, enrolled.stderr)
    })
    after(async () => {
      await agent?.stop('SIGKILL')
      await gw?.close()
      await rm(dir, { recursive: true, force: true })
      await rm(fakeRoot, { recursive: true, force: true })
    })

    it('becomes unhealthy, then lost: job fenced, allocations released, one node_lost event; a restarted agent gets 403 node_lost with its cleanup list', async () => {
      agent = startAgent()
      await eventually('a heartbeat', async () => (await getNode(gw.db.pool, NODE))?.hostFactsAt, {
        stop: () => (agent!.exit() ? 'the agent exited' : undefined),
      })
      await recordNodeCapacity(gw.db.pool, NODE, { cpu: 2, memoryMib: 4096, diskGib: 40 })
      await admitNode({ pool: gw.db.pool, nodeId: NODE, actor: 'test' })
      const allocation = await reserveAllocation(gw.db.pool, {
        nodeId: NODE,
        owner: 'ci',
        cpu: 1,
        memoryMib: 1024,
        diskGib: 10,
        actor: 'test',
      })
      await agent.stop('SIGKILL')
      // What the agent held when it died: a job leased under its identity (its token survives only here).
      const identity = {
        keyPem: await readFile(join(dir, 'pki', 'agent.key'), 'utf8'),
        certificatePem: await readFile(join(dir, 'pki', 'agent.pem'), 'utf8'),
      }
      const job = await createJob(gw.db.pool, { nodeId: NODE, kind: 'checks', now: new Date() })
      const held = (await gw.agent(identity, 'POST', '/v1/agent/lease', {})).body.job as {
        id: string
        lease_token: string
      }
      assert.equal(held.id, job.id)
      const queued = await createJob(gw.db.pool, { nodeId: NODE, kind: 'checks', now: new Date() })
      await gw.flushHeartbeats()

      await silence(100)
      const first = await runSweep(gw.db.pool, THRESHOLDS)
      assert.deepEqual(
        first.unhealthy.map((n) => n.nodeId),
        [NODE],
      )
      assert.deepEqual(first.lost, [])
      assert.equal((await getNode(gw.db.pool, NODE))!.status, 'unhealthy')

      await silence(400)
      const sweeps = [
        await runSweep(gw.db.pool, THRESHOLDS),
        await runSweep(gw.db.pool, THRESHOLDS),
        await runSweep(gw.db.pool, THRESHOLDS),
      ]
      assert.deepEqual(
        sweeps.map((s) => s.lost.map((n) => n.nodeId)),
        [[NODE], [], []],
      )
      assert.equal(sweeps[0]!.lost[0]!.fencedJobs, 2)
      assert.equal(sweeps[0]!.lost[0]!.releasedAllocations, 1)
      const node = (await getNode(gw.db.pool, NODE))!
      assert.equal(node.status, 'lost')
      assert.equal(node.schedulable, false)
      assert.equal(
        (await listEvents(gw.db.pool, { nodeId: NODE, kind: 'node_lost' })).length,
        1,
        'exactly one node_lost event',
      )
      assert.deepEqual((await listAllocations(gw.db.pool, { nodeId: NODE }))[0], {
        ...(await listAllocations(gw.db.pool, { nodeId: NODE }))[0]!,
        id: allocation.id,
        status: 'released',
        releaseReason: 'node_lost',
      })

      const fenced = (await getJob(gw.db.pool, job.id))!
      assert.equal(fenced.status, 'failed')
      assert.deepEqual(fenced.result, { error: 'target node lost; lease fenced', was: 'leased' })
      assert.equal((await getJob(gw.db.pool, queued.id))!.status, 'failed')
      // The late completion of the restarted agent: 409, and the row is exactly as the sweep left it.
      const late = await gw.agent(identity, 'POST', `/v1/agent/jobs/${job.id}/complete`, {
        lease_token: held.lease_token,
        status: 'succeeded',
        result: CHECKS_OK,
      })
      assert.equal(late.status, 409)
      assert.equal(code(late), 'lease_conflict')
      assert.deepEqual(await getJob(gw.db.pool, job.id), fenced)

      agent = startAgent()
      const said = await eventually(
        'the restarted agent told node_lost',
        () => {
          const line = (agent!.stdout() + agent!.stderr())
            .split('\n')
            .find((l) => l.includes('lease_refused') && l.includes('node_lost'))
          return line ? (JSON.parse(line) as { fenced_jobs: string[] }) : undefined
        },
        { timeoutMs: 30_000 },
      )
      assert.deepEqual([...said.fenced_jobs].sort(), [job.id, queued.id].sort())
      const direct = await gw.agent(identity, 'POST', '/v1/agent/lease', {})
      assert.equal(direct.status, 403)
      assert.equal(code(direct), 'node_lost')
      assert.deepEqual(
        (direct.body.cleanup as { job_id: string }[]).map((c) => c.job_id).sort(),
        [job.id, queued.id].sort(),
      )
      assert.equal(
        (await runSweep(gw.db.pool, THRESHOLDS)).lost.length,
        0,
        'a heartbeating lost node stays lost until admitted',
      )
      assert.equal((await listEvents(gw.db.pool, { nodeId: NODE, kind: 'node_lost' })).length, 1)
    })

    it('an unhealthy node is restored by its next authenticated request', async () => {
      await gw.db.pool.query("UPDATE nodes SET status = 'active', lost_at = NULL WHERE id = $1", [NODE])
      await agent?.stop('SIGKILL')
      // A beat the agent sent before it died may still sit in the coalescer: written after silence(), it would
      // move last_seen_at forward again. Two flushes: the first may only wait for a batch already in flight.
      await gw.flushHeartbeats()
      await gw.flushHeartbeats()
      await silence(100)
      assert.deepEqual(
        (await runSweep(gw.db.pool, THRESHOLDS)).unhealthy.map((n) => n.nodeId),
        [NODE],
      )
      const identity = {
        keyPem: await readFile(join(dir, 'pki', 'agent.key'), 'utf8'),
        certificatePem: await readFile(join(dir, 'pki', 'agent.pem'), 'utf8'),
      }
      const beat = await gw.agent(identity, 'POST', '/v1/agent/heartbeat', {})
      assert.equal(beat.status, 200)
      assert.equal(beat.body.node_status, 'active')
      assert.equal((await getNode(gw.db.pool, NODE))!.status, 'active')
      assert.equal((await listEvents(gw.db.pool, { nodeId: NODE, kind: 'node_recovered' })).length, 1)
    })
  })

  describe('two gateways on one database, clocks skewed by minutes', () => {
    let gw: TestGateway
    let second: GatewayWithControls
    let secondPool: pg.Pool
    // The first gateway runs 7 minutes fast, the second 6 minutes slow.
    const fast = fixedClock(new Date(Date.now() + 7 * 60_000))
    const slow = { now: () => new Date(Date.now() - 6 * 60_000) }
    before(async () => {
      gw = await startTestGateway({ postgresUrl: postgres.url, clock: fast, tuning: { sweepIntervalMs: 3_600_000 } })
      secondPool = new pg.Pool({ connectionString: gw.db.url, max: 10 })
      const any = { host: '127.0.0.1', port: 0 }
      second = await startGatewayWithControls({
        pool: secondPool,
        pki: await loadPkiSet(gw.pkiDir, new Date()),
        enrollBind: any,
        agentBind: any,
        agentCertLifetimeSeconds: 86400,
        clock: slow,
        logger: silentLogger,
        tuning: { ...TEST_TUNING, sweepIntervalMs: 3_600_000 },
        sweep: { run: (pool) => runSweep(pool, THRESHOLDS), thresholds: THRESHOLDS },
      })
    })
    after(async () => {
      await second?.close()
      await secondPool?.end()
      await gw?.close()
    })
    const agentUrl2 = () => `https://127.0.0.1:${second.agentAddress.port}`
    /** Enrolled through the slow gateway: the fast one's certificates start in the future of TLS's real clock. */
    const enrollOnSlow = async (nodeId: string) => {
      await gw.declareNode(nodeId)
      const secret = await gw.issueSecret(nodeId, { now: new Date() })
      const key = await nodeKey()
      const reply = await httpsJson(
        `https://127.0.0.1:${second.enrollAddress.port}`,
        'POST',
        '/v1/enroll',
        { node_id: nodeId, enrollment_secret: secret, csr_pem: await makeCsr(key, { name: `CN=${nodeId}` }) },
        { ca: gw.caPem },
      )
      assert.equal(reply.status, 200, JSON.stringify(reply.body))
      return { keyPem: key.privateKeyPem, certificatePem: reply.body.certificate_pem as string }
    }

    it("a job is leased exactly once, even when one gateway's clock says the other's lease expired long ago", async () => {
      const id = await enrollOnSlow('skew-1')
      const tls = { ca: gw.caPem, key: id.keyPem, cert: id.certificatePem }
      const job = await createJob(gw.db.pool, { nodeId: 'skew-1', kind: 'checks', now: new Date() })
      const onSlow = await httpsJson(agentUrl2(), 'POST', '/v1/agent/lease', {}, tls)
      assert.equal((onSlow.body.job as { id: string }).id, job.id)
      // On the fast gateway's clock the slow one's 120 s lease ran out 11 minutes ago; the database says it did not.
      fast.advance(60_000)
      const leases = await Promise.all(Array.from({ length: 10 }, () => gw.agent(id, 'POST', '/v1/agent/lease', {})))
      assert.deepEqual(
        leases.map((r) => r.body.job),
        Array(10).fill(null),
      )
      assert.equal((await getJob(gw.db.pool, job.id))!.attempts, 1)
    })

    it('silence is judged on the database clock: a heartbeat through the slow gateway keeps the node healthy', async () => {
      const id = await enrollOnSlow('skew-2')
      await httpsJson(
        agentUrl2(),
        'POST',
        '/v1/agent/heartbeat',
        {},
        { ca: gw.caPem, key: id.keyPem, cert: id.certificatePem },
      )
      await second.flushHeartbeats()
      const swept = await runSweep(gw.db.pool, THRESHOLDS)
      assert.ok(!swept.unhealthy.some((n) => n.nodeId === 'skew-2') && !swept.lost.some((n) => n.nodeId === 'skew-2'))
      const node = (await getNode(gw.db.pool, 'skew-2'))!
      const { rows } = await gw.db.pool.query<{ now: Date }>('SELECT now() AS now')
      assert.ok(
        Math.abs(node.lastSeenAt!.getTime() - rows[0]!.now.getTime()) < 10_000,
        'last_seen_at is on the database clock, not 6 minutes back',
      )
    })

    it('only one of them sweeps (the sweep lease); when it stops, the other takes over', async () => {
      const ticks = [
        await gw.gateway!.sweepNow(),
        await second.sweepNow(),
        await gw.gateway!.sweepNow(),
        await second.sweepNow(),
      ]
      assert.equal(ticks.filter((t) => t === 'swept').length, 2)
      assert.equal(ticks.filter((t) => t === 'not_leader').length, 2)
      assert.notEqual(gw.gateway!.isSweepLeader(), second.isSweepLeader())
      const leader = gw.gateway!.isSweepLeader() ? gw.gateway! : second
      const other = leader === second ? gw.gateway! : second
      const metrics = await (await fetch(`${gw.metricsUrl}/metrics`)).text()
      assert.match(metrics, /fleetkit_sweeps_total\{outcome="(swept|not_leader)"\} 2/)
      // Node counts by status and pool, heartbeat age, certificate expiry, leases, and prom-client's process/runtime defaults.
      assert.match(metrics, /^fleetkit_nodes\{status="active",pool="workers"\} 2$/m)
      assert.match(metrics, /^fleetkit_node_heartbeat_age_seconds_max\{pool="workers"\} [\d.]+$/m)
      assert.match(metrics, /^fleetkit_node_certificate_expiry_seconds_min\{pool="workers"\} \d+$/m)
      assert.match(metrics, /^fleetkit_gateway_leases_total\{outcome="none"\} 10$/m)
      assert.match(metrics, /^process_cpu_user_seconds_total \d/m)
      assert.match(metrics, /^nodejs_heap_size_used_bytes \d/m)
      assert.match(metrics, /^fleetkit_gateway_requests_total\{/m, 'the existing gateway metrics are still there')
      await leader.close()
      assert.equal(await other.sweepNow(), 'swept')
    })
  })
})
