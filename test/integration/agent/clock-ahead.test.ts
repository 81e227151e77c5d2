// A host clock ahead of the gateway's by more than the certificate has left: the agent must not call
// its certificate expired (the gateway would refuse the recovery, not_expired, and the agent used to
// exit 77 for good). It reports CLOCK_SKEW, keeps the certificate and keeps heartbeating, whether the
// clock was wrong at start or jumped while it ran. The agent runs in this process on injected clocks.
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { loadAgentConfig } from '../../../src/agent/config.js'
import { enroll } from '../../../src/agent/enroll.js'
import { runAgent } from '../../../src/agent/run-loop.js'
import { fixedClock } from '../../../src/config/clock.js'
import { seededRng } from '../../../src/config/rng.js'
import { memoryLogger } from '../../../src/log/logger.js'
import { type TestGateway, startTestGateway } from '../../support/gateway.js'
import { type DisposablePostgres, startDisposablePostgres } from '../../support/postgres.js'
import { fakeRunner } from '../../support/fake-host.js'

const LIFETIME_SECONDS = 3600
const DAY_MS = 86_400_000

describe('fleetkit-agent with a clock ahead by more than its certificate has left', function () {
  this.timeout(120_000)
  let postgres: DisposablePostgres
  let gw: TestGateway
  let dir: string
  /** The gateway's clock; the agent's sleeps advance it. */
  const virtual = fixedClock(new Date())

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-agent-ahead-'))
    postgres = await startDisposablePostgres()
    gw = await startTestGateway({
      postgresUrl: postgres.url,
      agentCertLifetimeSeconds: LIFETIME_SECONDS,
      clock: virtual,
    })
    await writeFile(join(dir, 'gateway-ca.pem'), gw.caPem)
  })

  after(async () => {
    await gw?.close()
    await postgres?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  /**
   * Enrolls `nodeId`, then runs its agent on a clock `aheadMs()` ahead of the gateway's until `done`
   * says so (or ten virtual minutes passed). Resolves with the log; rejects with what the loop threw.
   */
  async function runAhead(
    nodeId: string,
    aheadMs: (heartbeats: number) => number,
    done: (lines: Record<string, unknown>[]) => boolean,
  ) {
    await gw.declareNode(nodeId)
    await writeFile(join(dir, `${nodeId}.secret`), await gw.issueSecret(nodeId), { mode: 0o600 })
    await writeFile(
      join(dir, `${nodeId}.env`),
      [
        `FLEETKIT_NODE_ID=${nodeId}`,
        `FLEETKIT_GATEWAY_URL=${gw.agentUrl}`,
        `FLEETKIT_ENROLL_URL=${gw.enrollUrl}`,
        `FLEETKIT_GATEWAY_CA_FILE=${join(dir, 'gateway-ca.pem')}`,
        `FLEETKIT_ENROLLMENT_SECRET_FILE=${join(dir, `${nodeId}.secret`)}`,
        `FLEETKIT_AGENT_PKI_DIR=${join(dir, `${nodeId}-pki`)}`,
        `FLEETKIT_HOST_ROOT=${dir}`,
        'FLEETKIT_AGENT_HEARTBEAT_SECONDS=1',
        'FLEETKIT_AGENT_RENEW_CHECK_SECONDS=600',
        '',
      ].join('\n'),
    )
    const config = loadAgentConfig({ env: { FLEETKIT_AGENT_CONFIG: join(dir, `${nodeId}.env`) }, flags: {} })
    await enroll(config, { log: memoryLogger('agent', 'debug', () => virtual.now()) })
    const certificate = await readFile(join(dir, `${nodeId}-pki`, 'agent.pem'), 'utf8')

    const heartbeats = (lines: Record<string, unknown>[]) =>
      lines.filter((line) => line.msg === 'heartbeat' && line.status === 200).length
    const log = memoryLogger('agent', 'debug', () => virtual.now())
    const agentClock = { now: () => new Date(virtual.now().getTime() + aheadMs(heartbeats(log.lines))) }
    const controller = new AbortController()
    const startedAt = virtual.now().getTime()
    const sleep = async (ms: number) => {
      virtual.advance(Math.max(ms, 0))
      // Let the gateway and the sockets run; no real waiting.
      await new Promise((resolve) => setImmediate(resolve))
      if (done(log.lines) || virtual.now().getTime() - startedAt > 600_000) controller.abort()
    }
    await runAgent(config, {
      log,
      clock: agentClock,
      rng: seededRng(nodeId),
      host: { root: dir, run: fakeRunner({}) },
      signal: controller.signal,
      sleep,
    })
    const kept = await readFile(join(dir, `${nodeId}-pki`, 'agent.pem'), 'utf8')
    return { lines: log.lines, heartbeats: heartbeats(log.lines), keptCertificate: kept === certificate }
  }

  const skewReports = (lines: Record<string, unknown>[]) =>
    lines.filter((line) => line.msg === 'clock_skew' && line.code === 'CLOCK_SKEW')

  it('at start (two days ahead): reports CLOCK_SKEW, keeps its certificate and heartbeats', async () => {
    const run = await runAhead(
      'node-ahead-start',
      () => 2 * DAY_MS,
      (lines) => lines.filter((line) => line.msg === 'heartbeat').length >= 3,
    )
    assert.ok(skewReports(run.lines).length > 0, `no CLOCK_SKEW: ${JSON.stringify(run.lines.slice(-10))}`)
    assert.ok(
      skewReports(run.lines).every((line) => Math.abs((line.skew_ms as number) + 2 * DAY_MS) < 60_000),
      'the skew reported is the two days',
    )
    assert.equal(run.heartbeats, 3, 'heartbeats answered 200')
    assert.ok(run.keptCertificate, 'the certificate was kept, not recovered')
    assert.equal(run.lines.filter((line) => line.msg === 'identity_recovered').length, 0)
  })

  it('while running (a jump of a day after two heartbeats): reports CLOCK_SKEW and carries on', async () => {
    const run = await runAhead(
      'node-ahead-jump',
      (beats) => (beats >= 2 ? DAY_MS : 0),
      (lines) => lines.filter((line) => line.msg === 'heartbeat').length >= 5,
    )
    assert.ok(skewReports(run.lines).length > 0, `no CLOCK_SKEW: ${JSON.stringify(run.lines.slice(-10))}`)
    assert.equal(run.heartbeats, 5, 'heartbeats answered 200 before and after the jump')
    assert.ok(run.keptCertificate)
  })
})
