import assert from 'node:assert/strict'

import { getJob } from '../../../src/store/jobs.js'
import { assertMatchesOutputSchema, type CliRun, runFleetkit } from '../../support/cli.js'
import { startTestGateway, type AgentIdentityFiles, type TestGateway } from '../../support/gateway.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'

function nodeCheck(databaseUrl: string, ...args: string[]): Promise<CliRun> {
  return runFleetkit(['node', 'check', ...args], { env: { DATABASE_URL: databaseUrl }, timeout: 90_000 })
}

/** A stand-in agent: leases until it gets a job, then completes it with `result`. */
async function answerOneJob(gw: TestGateway, id: AgentIdentityFiles, status: 'succeeded' | 'failed', result: unknown): Promise<string> {
  for (let i = 0; i < 300; i++) {
    const reply = await gw.agent(id, 'POST', '/v1/agent/lease', { facts: {} })
    const job = reply.body.job as { id: string; lease_token: string } | null
    if (job) {
      const done = await gw.agent(id, 'POST', `/v1/agent/jobs/${job.id}/complete`, { lease_token: job.lease_token, status, result })
      assert.equal(done.status, 200)
      return job.id
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error('no job was queued')
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
    const [out, jobId] = await Promise.all([nodeCheck(gw.db.url, 'node-c', '--json', '--timeout', '60'), answerOneJob(gw, agent, 'succeeded', { checks })])
    assert.equal(out.code, 0, out.stderr)
    assertMatchesOutputSchema('node-check', out.json)
    const result = out.json.result as { jobId: string; checks: unknown[] }
    assert.equal(result.jobId, jobId)
    assert.deepEqual(result.checks, checks)
  })

  it('prints the checks in human mode and fails with NODE_CHECK_FAILED when a check fails', async () => {
    const checks = [
      { id: 'host:br-netfilter', status: 'fail', code: 'HOST_BR_NETFILTER_MISSING', detail: 'module not loaded' },
      { id: 'host:disk-free', status: 'pass' },
    ]
    const [human] = await Promise.all([nodeCheck(gw.db.url, 'node-c'), answerOneJob(gw, agent, 'succeeded', { checks })])
    assert.equal(human.code, 1)
    assert.match(human.stderr, /FAIL\s+host:br-netfilter\s+HOST_BR_NETFILTER_MISSING/)
    assert.match(human.stderr, /PASS\s+host:disk-free/)
    assert.match(human.stderr, /Error \(NODE_CHECK_FAILED\)/)
    // Progress is shown while waiting; which state the first poll sees depends on how fast the agent leases.
    assert.match(human.stderr, /^\[\d+s\] job [0-9a-f-]{36}: (queued, waiting for the agent|running on the node \(attempt 1\)|succeeded)$/m)
    const [json] = await Promise.all([nodeCheck(gw.db.url, 'node-c', '--json'), answerOneJob(gw, agent, 'succeeded', { checks })])
    assert.equal(json.json.code, 'NODE_CHECK_FAILED')
    assertMatchesOutputSchema('node-check', json.json)
    assert.deepEqual((json.json.data as { checks: unknown }).checks, checks)
  })

  it('gives up with NODE_CHECK_TIMEOUT when no agent answers, and withdraws the job', async () => {
    const out = await nodeCheck(gw.db.url, 'node-c', '--json', '--timeout', '1')
    assert.equal(out.json.code, 'NODE_CHECK_TIMEOUT')
    assertMatchesOutputSchema('node-check', out.json)
    const jobId = (out.json.data as { jobId: string }).jobId
    const job = await getJob(gw.db.pool, jobId)
    assert.equal(job!.status, 'failed')
    assert.deepEqual(job!.result, { error: 'timed_out' })
    assert.equal((await gw.agent(agent, 'POST', '/v1/agent/lease', {})).body.job, null, 'the withdrawn job is not leased')
  })

  it('refuses an unknown node with NODE_UNKNOWN', async () => {
    const out = await nodeCheck(gw.db.url, 'no-such-node', '--json')
    assert.equal(out.json.code, 'NODE_UNKNOWN')
    assertMatchesOutputSchema('node-check', out.json)
  })
})
