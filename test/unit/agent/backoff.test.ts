// The agent's backoff while the gateway is unreachable: decorrelated jitter between the heartbeat
// interval and three times the last wait, never above the cap; driven by an injected rng and clock.
import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { Backoff, nextBackoffMs, retryLaterWaitMs } from '../../../src/agent/backoff.js'
import { loadAgentConfig } from '../../../src/agent/config.js'
import { stageIdentity } from '../../../src/agent/identity.js'
import { runAgent } from '../../../src/agent/run-loop.js'
import { fixedClock } from '../../../src/config/clock.js'
import { seededRng, unitIntervalSequence } from '../../../src/config/rng.js'
import { memoryLogger } from '../../../src/log/logger.js'
import { makeTestIdentity } from '../../support/agent-identity.js'
import { HEALTHY_FILES, fakeRunner, makeFakeRoot } from '../../support/fake-host.js'

const policy = { baseMs: 15_000, capMs: 300_000 }

describe('agent backoff', () => {
  it('draws the lowest wait (the base) for rng 0 and just under three times the last for rng near 1', () => {
    assert.equal(nextBackoffMs(0, policy, unitIntervalSequence([0])), 15_000)
    assert.equal(nextBackoffMs(40_000, policy, unitIntervalSequence([0])), 15_000)
    const high = nextBackoffMs(40_000, policy, unitIntervalSequence([0.999999]))
    assert.ok(high > 119_000 && high <= 120_000, String(high))
    const mid = nextBackoffMs(40_000, policy, unitIntervalSequence([0.5]))
    assert.equal(mid, 15_000 + Math.round(0.5 * (120_000 - 15_000)))
  })

  it('grows exponentially with rng near 1 and then stays at the cap', () => {
    const backoff = new Backoff(policy, unitIntervalSequence([0.999999]))
    const waits = Array.from({ length: 8 }, () => backoff.failed())
    // 45 s, 135 s, then capped at 300 s (without the cap: 405 s, 1215 s, ...).
    assert.ok(Math.abs(waits[0]! - 45_000) <= 1, String(waits[0]))
    assert.ok(Math.abs(waits[1]! - 135_000) <= 1, String(waits[1]))
    assert.deepEqual(waits.slice(2), [300_000, 300_000, 300_000, 300_000, 300_000, 300_000])
    assert.equal(backoff.consecutiveFailures, 8)
  })

  it('keeps every jittered wait between the base and the cap, spread out, over 10,000 draws', () => {
    const rng = seededRng('backoff')
    let previous = 0
    const waits: number[] = []
    for (let i = 0; i < 10_000; i++) {
      previous = nextBackoffMs(previous, policy, rng)
      waits.push(previous)
    }
    for (const wait of waits) assert.ok(wait >= policy.baseMs && wait <= policy.capMs, `wait ${wait} out of bounds`)
    // Jitter, not lockstep: agents that failed together wait many different times.
    assert.ok(new Set(waits).size > 9_000)
    assert.ok(waits.some((w) => w < 60_000) && waits.some((w) => w > 240_000))
  })

  it('two agents with different randomness do not retry together', () => {
    const a = new Backoff(policy, seededRng('agent-a'))
    const b = new Backoff(policy, seededRng('agent-b'))
    const pairs = Array.from({ length: 5 }, () => [a.failed(), b.failed()])
    assert.ok(pairs.some(([x, y]) => x !== y))
  })

  it('starts again from the base after a success', () => {
    const backoff = new Backoff(policy, unitIntervalSequence([0.999999]))
    backoff.failed()
    backoff.failed()
    backoff.succeeded()
    assert.equal(backoff.consecutiveFailures, 0)
    assert.ok(Math.abs(backoff.failed() - 45_000) <= 1)
  })

  it('a shed heartbeat waits Retry-After plus up to one interval of jitter, never less than the backoff', () => {
    const now = Date.parse('2026-12-01T00:00:00Z')
    // 30 s asked + 7.5 s of jitter (rng 0.5) beats the backoff's first draw (rng 0.5: 30 s).
    assert.equal(
      retryLaterWaitMs(
        '30',
        new Backoff(policy, unitIntervalSequence([0.5])),
        15_000,
        now,
        unitIntervalSequence([0.5]),
      ),
      37_500,
    )
    // Retry-After 1 s: the backoff's 15 s floor wins over 1 s + 7.5 s of jitter.
    assert.equal(
      retryLaterWaitMs('1', new Backoff(policy, unitIntervalSequence([0])), 15_000, now, unitIntervalSequence([0.5])),
      15_000,
    )
    // No header and no jitter: the backoff's draw (near its top, 45 s, for rng near 1).
    assert.equal(
      retryLaterWaitMs(
        undefined,
        new Backoff(policy, unitIntervalSequence([0.999999])),
        15_000,
        now,
        unitIntervalSequence([0]),
      ),
      45_000,
    )
  })

  it('never exceeds a cap below the base: the base wins', () => {
    assert.equal(nextBackoffMs(0, { baseMs: 10_000, capMs: 5_000 }, unitIntervalSequence([0.9])), 10_000)
  })
})

describe('agent run loop against an unreachable gateway', function () {
  this.timeout(30_000)
  let dir: string
  let root: string
  let closedPort: number

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-agent-backoff-'))
    root = await makeFakeRoot(HEALTHY_FILES)
    // A port that was just free: connecting is refused at once.
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    closedPort = (server.address() as { port: number }).port
    await new Promise((resolve) => server.close(resolve))
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
    await rm(root, { recursive: true, force: true })
  })

  it('waits on the jittered backoff (not every heartbeat) and logs retry_in_ms, on an injected clock', async () => {
    const start = new Date()
    const identity = await makeTestIdentity(
      'node-b',
      new Date(start.getTime() - 60_000),
      new Date(start.getTime() + 86_400_000),
    )
    await stageIdentity(join(dir, 'pki'), identity.keyPem, identity.certificatePem, identity.caPem)
    const config = loadAgentConfig({
      env: {
        FLEETKIT_NODE_ID: 'node-b',
        FLEETKIT_GATEWAY_URL: `https://127.0.0.1:${closedPort}`,
        FLEETKIT_AGENT_PKI_DIR: join(dir, 'pki'),
        FLEETKIT_HOST_ROOT: root,
        FLEETKIT_AGENT_HEARTBEAT_SECONDS: '15',
        FLEETKIT_AGENT_BACKOFF_MAX_SECONDS: '300',
        FLEETKIT_AGENT_RENEW_CHECK_SECONDS: '86400',
      },
      flags: {},
      readFile: () => '',
    })
    const clock = fixedClock(start)
    const log = memoryLogger('agent', 'debug', () => clock.now())
    const controller = new AbortController()
    const waits: number[] = []
    const sleep = async (ms: number) => {
      waits.push(ms)
      clock.advance(ms)
      if (waits.length >= 8) controller.abort()
    }
    await runAgent(config, {
      log,
      clock,
      rng: unitIntervalSequence([0.999999]),
      host: { root, run: fakeRunner({}) },
      signal: controller.signal,
      sleep,
    })

    const failures = log.lines.filter((line) => line.msg === 'gateway_call_failed')
    assert.equal(failures.length, 8)
    for (const line of failures) assert.equal(line.code, 'GATEWAY_UNREACHABLE')
    const retries = failures.map((line) => line.retry_in_ms as number)
    assert.ok(Math.abs(retries[0]! - 45_000) <= 1 && Math.abs(retries[1]! - 135_000) <= 1, retries.join(','))
    assert.deepEqual(retries.slice(2), [300_000, 300_000, 300_000, 300_000, 300_000, 300_000])
    assert.deepEqual(
      failures.map((line) => line.failures),
      [1, 2, 3, 4, 5, 6, 7, 8],
    )
    // The loop slept exactly the backoff: no call in between at the 15 s heartbeat interval.
    assert.deepEqual(
      waits.map((ms, i) => Math.abs(ms - retries[i]!) <= 1),
      waits.map(() => true),
    )
  })
})
