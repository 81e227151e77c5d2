// N gateways (issue 24, item 4): an agent given a gateway and its replica starts at the one its node ID
// picks, stays there while it answers, and when that gateway goes away moves to the other one after a
// short jittered wait and keeps heartbeating; enrollment given an unreachable gateway first uses the next.
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { loadAgentConfig } from '../../../src/agent/config.js'
import { runDoctor } from '../../../src/agent/doctor.js'
import { enroll } from '../../../src/agent/enroll.js'
import { startIndex } from '../../../src/agent/gateway-choice.js'
import { runAgent } from '../../../src/agent/run-loop.js'
import { systemClock } from '../../../src/config/clock.js'
import { seededRng } from '../../../src/config/rng.js'
import { memoryLogger } from '../../../src/log/logger.js'
import { eventually } from '../../support/eventually.js'
import { fakeHost, fakeRunner } from '../../support/fake-host.js'
import { type TestGateway, startTestGateway } from '../../support/gateway.js'
import { freePort } from '../../support/ports.js'
import { type DisposablePostgres, startDisposablePostgres } from '../../support/postgres.js'

const NODE = 'node-failover'

describe('an agent with two gateways on one database', function () {
  this.timeout(120_000)
  let postgres: DisposablePostgres
  let first: TestGateway
  let second: TestGateway | undefined
  let replicaUrl: string
  let dir: string

  before(async () => {
    postgres = await startDisposablePostgres()
    first = await startTestGateway({ postgresUrl: postgres.url })
    second = await startTestGateway({ postgresUrl: postgres.url, shared: first })
    replicaUrl = second.agentUrl
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-failover-'))
    await writeFile(join(dir, 'gateway-ca.pem'), first.caPem)
  })
  after(async () => {
    await second?.close()
    await first?.close()
    await postgres?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  /** The two URLs ordered so that this node starts at `start` (its node ID picks the index). */
  function ordered(start: string, other: string): string {
    return startIndex(NODE, 2) === 0 ? `${start},${other}` : `${other},${start}`
  }

  it('enrolls through the next enrollment URL when the first one it tries is unreachable', async () => {
    await first.declareNode(NODE)
    const secret = await first.issueSecret(NODE)
    await writeFile(join(dir, 'secret'), secret)
    const dead = `https://127.0.0.1:${await freePort()}`
    await writeFile(
      join(dir, 'agent.env'),
      [
        `FLEETKIT_NODE_ID=${NODE}`,
        `FLEETKIT_ENROLL_URL=${ordered(dead, first.enrollUrl)}`,
        `FLEETKIT_GATEWAY_URL=${ordered(second!.agentUrl, first.agentUrl)}`,
        `FLEETKIT_GATEWAY_CA_FILE=${join(dir, 'gateway-ca.pem')}`,
        `FLEETKIT_ENROLLMENT_SECRET_FILE=${join(dir, 'secret')}`,
        `FLEETKIT_AGENT_PKI_DIR=${join(dir, 'pki')}`,
        `FLEETKIT_HOST_ROOT=${dir}`,
        'FLEETKIT_AGENT_HEARTBEAT_SECONDS=1',
        'FLEETKIT_AGENT_REQUEST_TIMEOUT_SECONDS=5',
        '',
      ].join('\n'),
    )
    const config = loadAgentConfig({ env: { FLEETKIT_AGENT_CONFIG: join(dir, 'agent.env') }, flags: {} })
    assert.equal(config.enrollUrls.length, 2)
    const log = memoryLogger('agent', 'debug')
    const result = await enroll(config, { log })
    assert.equal(result.outcome, 'enrolled')
    const moved = log.lines.find((l) => l.msg === 'enroll_failover')
    assert.deepEqual([moved?.from, moved?.to], [dead, first.enrollUrl])
  })

  /** `fleetkit-agent doctor`'s agent:gateway line for the enrolled agent. */
  async function doctorGatewayCheck() {
    const config = loadAgentConfig({ env: { FLEETKIT_AGENT_CONFIG: join(dir, 'agent.env') }, flags: {} })
    const results = await runDoctor(config, { host: fakeHost(dir, {}), now: () => new Date() })
    return results.find((r) => r.id === 'agent:gateway')!
  }

  it('doctor asks every gateway: both accept the certificate', async () => {
    const check = await doctorGatewayCheck()
    assert.equal(check.status, 'pass', check.detail)
    assert.match(check.detail, /^all 2 gateways accept certificate /)
  })

  it('heartbeats through its own gateway, and through the other one once its own is gone', async () => {
    const config = loadAgentConfig({ env: { FLEETKIT_AGENT_CONFIG: join(dir, 'agent.env') }, flags: {} })
    const log = memoryLogger('agent', 'debug')
    const controller = new AbortController()
    const lastSeen = async () =>
      (
        await first.db.pool.query<{ at: Date | null }>('SELECT last_seen_at AS at FROM nodes WHERE id = $1', [NODE])
      ).rows[0]?.at?.getTime() ?? 0
    const running = runAgent(config, {
      log,
      clock: systemClock,
      rng: seededRng('failover'),
      host: { root: dir, run: fakeRunner({}) },
      signal: controller.signal,
    })
    try {
      // Its start gateway is the replica: heartbeats land through it, nothing moves.
      await eventually('a heartbeat through the replica', async () => {
        await second!.flushHeartbeats()
        return log.lines.filter((l) => l.msg === 'heartbeat' && l.status === 200).length >= 2
      })
      assert.equal(log.lines.filter((l) => l.msg === 'gateway_failover').length, 0)

      await second!.close()
      second = undefined
      const gone = Date.now()
      const moved = await eventually('the move to the other gateway', () =>
        log.lines.find((l) => l.msg === 'gateway_failover'),
      )
      assert.deepEqual([moved.from, moved.to], [replicaUrl, first.agentUrl])
      assert.equal(moved.untried, true)
      // A quick jittered retry (at most the heartbeat interval here), not the backoff: the failed call is
      // logged as unreachable (no connection) or unavailable (a 503 from a gateway while it closes).
      const failed = log.lines.find((l) => l.msg === 'gateway_call_failed' || l.msg === 'gateway_unavailable')
      assert.ok(failed && (failed.retry_in_ms as number) <= 1000, JSON.stringify(log.lines.slice(-8)))
      await eventually('heartbeats through the other gateway', async () => {
        await first.flushHeartbeats()
        return (await lastSeen()) > gone
      })
    } finally {
      controller.abort()
      await running
    }
  })

  it('doctor warns naming the gateway that is gone, and passes nothing off as fine', async () => {
    assert.equal(second, undefined, 'the replica was closed by the previous test')
    const check = await doctorGatewayCheck()
    assert.equal(check.status, 'warn', check.detail)
    assert.equal(check.code, 'GATEWAY_UNREACHABLE')
    assert.match(
      check.detail,
      /^1 of 2 gateways fail \(the agent moves past them\): cannot reach the gateway at https:/,
    )
    assert.ok(check.detail.includes(`at ${replicaUrl}: `), check.detail)
    assert.ok(!check.detail.includes(`at ${first.agentUrl}: `), check.detail)
  })
})
