import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'

import { packagePath } from '../../../src/package-root.js'
import { completeJob, getJob } from '../../../src/store/scheduling/jobs.js'
import { assertMatchesOutputSchema, type CliRun, fleetkitEntry, runFleetkit } from '../../support/cli.js'
import { startTestGateway, type AgentIdentityFiles, type TestGateway } from '../../support/gateway.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'
import { eventually } from '../../support/eventually.js'
import { overlayEnv, startProcess } from '../../support/process.js'

function nodeCheck(databaseUrl: string, ...args: string[]): Promise<CliRun> {
  return runFleetkit(['node', 'check', ...args], { env: { DATABASE_URL: databaseUrl }, timeout: 90_000 })
}

interface LeasedJob {
  id: string
  lease_token: string
}

/** A stand-in agent: leases until it gets a job (never a real agent: nothing runs unless a test asks). */
function leaseOneJob(gw: TestGateway, id: AgentIdentityFiles): Promise<LeasedJob> {
  return eventually(
    'a queued job to lease',
    async () => {
      const reply = await gw.agent(id, 'POST', '/v1/agent/lease', { facts: {} })
      return (reply.body.job as LeasedJob | null) ?? undefined
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  )
}

/** Leases the queued job and completes it through the gateway's route with `result`. */
async function answerOneJob(
  gw: TestGateway,
  id: AgentIdentityFiles,
  status: 'succeeded' | 'failed',
  result: unknown,
): Promise<string> {
  const job = await leaseOneJob(gw, id)
  const done = await gw.agent(id, 'POST', `/v1/agent/jobs/${job.id}/complete`, {
    lease_token: job.lease_token,
    status,
    result,
  })
  assert.equal(done.status, 200, JSON.stringify(done.body))
  return job.id
}

/** Leases the queued job and stores `result` straight in the jobs table: a row an older gateway may have written. */
async function storeOneResult(gw: TestGateway, id: AgentIdentityFiles, result: unknown): Promise<string> {
  const job = await leaseOneJob(gw, id)
  const leaseTokenSha256 = createHash('sha256').update(job.lease_token, 'utf8').digest()
  assert.ok(
    await completeJob(gw.db.pool, {
      jobId: job.id,
      nodeId: id.nodeId,
      leaseTokenSha256,
      status: 'succeeded',
      result,
      now: new Date(),
    }),
  )
  return job.id
}

describe('fleetkit node check', function () {
  this.timeout(180_000)
  let pg: DisposablePostgres
  let gw: TestGateway
  let agent: AgentIdentityFiles
  before(async () => {
    pg = await startDisposablePostgres()
    gw = await startTestGateway({ postgresUrl: pg.url })
    await gw.declareNode('node-c')
    agent = await gw.enroll('node-c', await gw.issueSecret('node-c'))
  })
  after(async () => {
    await gw?.close()
    await pg?.stop()
  })

  it('queues a checks job, waits for the agent, and prints each check ID with status and code (--json matches the schema)', async () => {
    const checks = [
      { id: 'host:br-netfilter', status: 'pass', detail: 'br_netfilter loaded' },
      { id: 'agent:clock-skew', status: 'warn', code: 'CLOCK_SKEW', detail: 'skew 900 ms' },
    ]
    const [out, jobId] = await Promise.all([
      nodeCheck(gw.db.url, 'node-c', '--json', '--timeout', '60'),
      answerOneJob(gw, agent, 'succeeded', { checks }),
    ])
    assert.equal(out.code, 0, out.stderr)
    assertMatchesOutputSchema('node-check', out.json)
    const result = out.json.result as { jobId: string; checks: unknown[] }
    assert.equal(result.jobId, jobId)
    assert.deepEqual(result.checks, checks)
  })

  it('prints the checks in human mode and fails with NODE_CHECK_FAILED when a check fails', async () => {
    const checks = [
      { id: 'host:br-netfilter', status: 'fail', code: 'BR_NETFILTER_OFF', detail: 'module not loaded' },
      { id: 'host:disk-free', status: 'pass', detail: '40 GiB free' },
    ]
    const [human] = await Promise.all([
      nodeCheck(gw.db.url, 'node-c'),
      answerOneJob(gw, agent, 'succeeded', { checks }),
    ])
    assert.equal(human.code, 1)
    assert.match(human.stderr, /FAIL\s+host:br-netfilter\s+BR_NETFILTER_OFF/)
    assert.match(human.stderr, /PASS\s+host:disk-free/)
    assert.match(human.stderr, /Error \(NODE_CHECK_FAILED\)/)
    assert.match(human.stderr, /^\s+fleetkit runbook BR_NETFILTER_OFF$/m)
    // Progress is shown while waiting; which state the first poll sees depends on how fast the agent leases.
    assert.match(
      human.stderr,
      /^\[\d+s\] job [0-9a-f-]{36}: (queued, waiting for the agent|running on the node \(attempt 1\)|succeeded)$/m,
    )
    const [json] = await Promise.all([
      nodeCheck(gw.db.url, 'node-c', '--json'),
      answerOneJob(gw, agent, 'succeeded', { checks }),
    ])
    assert.equal(json.json.code, 'NODE_CHECK_FAILED')
    assertMatchesOutputSchema('node-check', json.json)
    assert.deepEqual((json.json.data as { checks: unknown }).checks, checks)
  })

  it('shows a not-applicable check as N/A, counted neither as passed nor as failed (human and --json)', async () => {
    const checks = [
      { id: 'host:br-netfilter', status: 'not_applicable', detail: 'the node declares container: true' },
      { id: 'host:disk-free', status: 'pass', detail: '40 GiB free' },
    ]
    const [human] = await Promise.all([
      nodeCheck(gw.db.url, 'node-c'),
      answerOneJob(gw, agent, 'succeeded', { checks }),
    ])
    assert.equal(human.code, 0, human.stderr)
    assert.match(human.stdout, /^N\/A\s+host:br-netfilter\s+-\s+the node declares container: true$/m)
    assert.match(human.stdout, /^node-c: 1 checks, none failed; 1 not applicable$/m)
    const [json] = await Promise.all([
      nodeCheck(gw.db.url, 'node-c', '--json'),
      answerOneJob(gw, agent, 'succeeded', { checks }),
    ])
    assertMatchesOutputSchema('node-check', json.json)
    const result = json.json.result as { checks: unknown[]; counts: unknown }
    assert.deepEqual(result.checks, checks)
    assert.deepEqual(result.counts, { pass: 1, warn: 0, fail: 0, notApplicable: 1 })
  })

  it("names the agent's reason when the job itself failed", async () => {
    const [out] = await Promise.all([
      nodeCheck(gw.db.url, 'node-c', '--json'),
      answerOneJob(gw, agent, 'failed', { error: { code: 'job_error', message: 'nft: command not found' } }),
    ])
    assert.equal(out.json.code, 'NODE_CHECK_FAILED')
    assert.match(out.json.message, /job_error: nft: command not found/)
    assertMatchesOutputSchema('node-check', out.json)
  })

  it('fails a result it cannot read (unknown status, malformed ID, unregistered code, no checks) with NODE_CHECK_RESULT_INVALID, never "0 checks"', async () => {
    const unreadable = [
      { checks: [{ id: 'host:firewall', status: 'exploded', detail: 'x' }] },
      { checks: [{ id: 'Bad ID', status: 'pass', detail: 'x' }] },
      { checks: [{ id: 'host:br-netfilter', status: 'fail', code: 'HOST_BR_NETFILTER_MISSING', detail: 'x' }] },
      { checks: [] },
      { surprise: true },
    ]
    for (const result of unreadable) {
      const [out] = await Promise.all([nodeCheck(gw.db.url, 'node-c', '--json'), storeOneResult(gw, agent, result)])
      assert.equal(out.json.code, 'NODE_CHECK_RESULT_INVALID', JSON.stringify(result))
      assert.equal(out.code, 1)
      assertMatchesOutputSchema('node-check', out.json)
    }
    const [human] = await Promise.all([nodeCheck(gw.db.url, 'node-c'), storeOneResult(gw, agent, { checks: [] })])
    assert.match(human.stderr, /Error \(NODE_CHECK_RESULT_INVALID\)/)
    assert.doesNotMatch(human.stdout, /none failed/)
  })

  it('strips terminal control characters from agent text before printing it', async () => {
    const hostile = 'ok\u001b[2J\u001b]0;pwned\u0007\r\nINJECTED\u001b[31m'
    const checks = [
      { id: 'host:disk-free', status: 'pass', detail: hostile },
      { id: 'host:firewall', status: 'fail', code: 'FIREWALL_TABLE_MISSING', detail: hostile },
    ]
    // Stored as an older gateway might have stored it, and sent through today's gateway: neither reaches the terminal raw.
    for (const answer of [
      () => storeOneResult(gw, agent, { checks }),
      () => answerOneJob(gw, agent, 'succeeded', { checks }),
    ]) {
      const [human] = await Promise.all([nodeCheck(gw.db.url, 'node-c'), answer()])
      assert.equal(human.code, 1)
      // eslint-disable-next-line no-control-regex
      assert.doesNotMatch(human.stdout + human.stderr, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
      assert.match(human.stderr, /^PASS\s+host:disk-free\s+-\s+ok INJECTED$/m)
    }
  })

  it('fails at once with NODE_NOT_ENROLLED for a node whose agent never enrolled, and queues nothing', async () => {
    await gw.declareNode('node-new')
    const out = await nodeCheck(gw.db.url, 'node-new', '--json', '--timeout', '3600')
    assert.equal(out.json.code, 'NODE_NOT_ENROLLED')
    assert.match(out.json.actions.join('\n'), /fleetkit node token node-new/)
    assertMatchesOutputSchema('node-check', out.json)
    const jobs = await gw.db.pool.query('SELECT count(*)::int AS n FROM jobs WHERE node_id = $1', ['node-new'])
    assert.equal(jobs.rows[0].n, 0, 'no job was queued for an agent that cannot take it')
  })

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`withdraws the queued job on ${signal} (real signal, real command, no agent running)`, async () => {
      const check = startProcess(process.execPath, [fleetkitEntry(), 'node', 'check', 'node-c', '--timeout', '600'], {
        cwd: packagePath(),
        env: overlayEnv({ DATABASE_URL: gw.db.url }),
      })
      await eventually('node check to queue its job', () => /queued, waiting for the agent/.test(check.stderr()), {
        timeoutMs: 60_000,
        intervalMs: 50,
        stop: () => (check.exit() ? `node check ended before it queued: ${check.stderr()}` : undefined),
      })
      const jobId = /job ([0-9a-f-]{36}): queued/.exec(check.stderr())![1]!
      await check.stop(signal, 60_000)
      const stderr = check.stderr()
      assert.equal(check.exit()?.code, 130, stderr)
      assert.match(stderr, /Error \(NODE_CHECK_INTERRUPTED\): .*was withdrawn/)
      const job = await getJob(gw.db.pool, jobId)
      assert.equal(job!.status, 'failed')
      assert.deepEqual(job!.result, { error: 'interrupted', withdrawn: true })
      assert.equal(
        (await gw.agent(agent, 'POST', '/v1/agent/lease', {})).body.job,
        null,
        'the withdrawn job is not leased',
      )
    })
  }

  it('gives up with NODE_CHECK_TIMEOUT when no agent answers, and withdraws the job', async () => {
    const out = await nodeCheck(gw.db.url, 'node-c', '--json', '--timeout', '1')
    assert.equal(out.json.code, 'NODE_CHECK_TIMEOUT')
    assertMatchesOutputSchema('node-check', out.json)
    const jobId = (out.json.data as { jobId: string }).jobId
    const job = await getJob(gw.db.pool, jobId)
    assert.equal(job!.status, 'failed')
    assert.deepEqual(job!.result, { error: 'timed_out', withdrawn: true })
    assert.equal(
      (await gw.agent(agent, 'POST', '/v1/agent/lease', {})).body.job,
      null,
      'the withdrawn job is not leased',
    )
  })

  it('refuses an unknown node with NODE_UNKNOWN, suggesting the nearest known ids on one line', async () => {
    const out = await nodeCheck(gw.db.url, 'no-such-node', '--json')
    assert.equal(out.json.code, 'NODE_UNKNOWN')
    assertMatchesOutputSchema('node-check', out.json)
    const typo = await nodeCheck(gw.db.url, 'node-x')
    assert.match(
      typo.stderr,
      /^Error \(NODE_UNKNOWN\): no node "node-x" in the state database; did you mean "node-c"( or "[^"]+")*\?$/m,
    )
  })

  it('fails at once naming the status of a node that cannot lease (draining: NODE_STATE_CONFLICT), and queues nothing', async () => {
    await gw.declareNode('node-d')
    await gw.enroll('node-d', await gw.issueSecret('node-d'))
    await gw.db.pool.query("UPDATE nodes SET status = 'draining' WHERE id = 'node-d'")
    const out = await nodeCheck(gw.db.url, 'node-d', '--json', '--timeout', '3600')
    assert.equal(out.json.code, 'NODE_STATE_CONFLICT', out.stdout + out.stderr)
    assert.match(out.json.message, /cannot check node-d: it is draining/)
    assert.match(out.json.actions.join('\n'), /fleetkit node undrain node-d/)
    assertMatchesOutputSchema('node-check', out.json)
    const jobs = await gw.db.pool.query('SELECT count(*)::int AS n FROM jobs WHERE node_id = $1', ['node-d'])
    assert.equal(jobs.rows[0].n, 0, 'no job was queued for an agent that cannot lease it')
  })
})
