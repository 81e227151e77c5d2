// Past 90% of the lifetime the agent renews at once: on start (the bundle), and by checking at the
// 90% point even when FLEETKIT_AGENT_RENEW_CHECK_SECONDS (here ten minutes) would check much later
// (the agent in this process on an injected clock, so no test waits for the certificate to age).
import assert from 'node:assert/strict'
import { X509Certificate } from 'node:crypto'
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
import { copyAgentBundle } from '../../support/agent-bundle.js'
import { eventually } from '../../support/eventually.js'
import { type RunningProcess, runProcessOk, startProcess } from '../../support/process.js'

const agentNode = process.env.FLEETKIT_AGENT_TEST_NODE || process.execPath
const LIFETIME_SECONDS = 300
// Issued so that 92% of its 360 s (300 s + 60 s backdating) has passed when the agent starts.
const ISSUED_AGO_MS = (0.92 * (LIFETIME_SECONDS + 60) - 60) * 1000

describe('fleetkit-agent renewal past 90% of the lifetime', function () {
  this.timeout(120_000)
  let postgres: DisposablePostgres
  let gw: TestGateway
  let dir: string
  let bundle: string
  let agent: RunningProcess | undefined
  const envFor = (gateway: TestGateway, nodeId: string, secretFile: string, pkiDir: string) =>
    [
      `FLEETKIT_NODE_ID=${nodeId}`,
      `FLEETKIT_GATEWAY_URL=${gateway.agentUrl}`,
      `FLEETKIT_ENROLL_URL=${gateway.enrollUrl}`,
      `FLEETKIT_GATEWAY_CA_FILE=${join(dir, 'gateway-ca.pem')}`,
      `FLEETKIT_ENROLLMENT_SECRET_FILE=${secretFile}`,
      `FLEETKIT_AGENT_PKI_DIR=${pkiDir}`,
      `FLEETKIT_HOST_ROOT=${dir}`,
      'FLEETKIT_AGENT_HEARTBEAT_SECONDS=1',
      'FLEETKIT_AGENT_RENEW_CHECK_SECONDS=600',
      '',
    ].join('\n')
  const clock = { offsetMs: -ISSUED_AGO_MS, now: () => new Date(Date.now() + clock.offsetMs) }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-agent-urgent-'))
    bundle = join(dir, 'fleetkit-agent')
    await copyAgentBundle(bundle)
    postgres = await startDisposablePostgres()
    gw = await startTestGateway({ postgresUrl: postgres.url, agentCertLifetimeSeconds: LIFETIME_SECONDS, clock })
    await gw.declareNode('node-late')
    await writeFile(join(dir, 'gateway-ca.pem'), gw.caPem)
    await writeFile(join(dir, 'secret'), await gw.issueSecret('node-late'), { mode: 0o600 })
    await writeFile(join(dir, 'agent.env'), envFor(gw, 'node-late', join(dir, 'secret'), join(dir, 'pki')))
  })

  after(async () => {
    await agent?.stop('SIGTERM')
    await gw?.close()
    await postgres?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('renews at once on start, with a ten-minute check interval', async () => {
    const env = { PATH: process.env.PATH ?? '', FLEETKIT_AGENT_CONFIG: join(dir, 'agent.env') }
    await runProcessOk(agentNode, [bundle, 'enroll'], { env })
    const enrolled = new X509Certificate(await readFile(join(dir, 'pki', 'agent.pem'), 'utf8'))
    // Back to the real time: the certificate is now 92% through its life for both sides.
    clock.offsetMs = 0
    const lifetime = Date.parse(enrolled.validTo) - Date.parse(enrolled.validFrom)
    assert.ok((Date.now() - Date.parse(enrolled.validFrom)) / lifetime > 0.9)

    const running = startProcess(agentNode, [bundle, 'run'], { env })
    agent = running
    const renewedLogged = () => running.stderr().includes('"msg":"certificate_renewed"')
    // A timeout or an early exit is reported by the assertion below, with what the agent said.
    await eventually('the renewal', renewedLogged, {
      timeoutMs: 15_000,
      intervalMs: 100,
      stop: () => (running.exit() ? 'the agent exited' : undefined),
    }).catch(() => undefined)
    assert.ok(renewedLogged(), `no renewal: ${running.stderr().slice(-2000)}`)
    const renewed = new X509Certificate(await readFile(join(dir, 'pki', 'agent.pem'), 'utf8'))
    assert.notEqual(renewed.serialNumber, enrolled.serialNumber)
    assert.ok(Date.parse(renewed.validTo) - Date.now() > (LIFETIME_SECONDS - 30) * 1000)
    assert.equal(running.exit(), undefined)
  })

  it('checks at the 90% point, not ten minutes later, when the planned point passed between checks (injected clock)', async () => {
    // The agent runs in this process on a clock the test moves: its sleeps advance the clock the
    // gateway also reads, so 36 s of the certificate's life pass in well under a second of real time.
    // 40 s + 60 s backdating: issued at 60%, so the check on start waits; the planned point
    // (67-85%) passes with no check due; the next check is clamped to the 90% point.
    const virtual = fixedClock(new Date())
    const second = await startTestGateway({ postgresUrl: postgres.url, agentCertLifetimeSeconds: 40, clock: virtual })
    try {
      await second.declareNode('node-clamp')
      await writeFile(join(dir, 'gateway-ca.pem'), second.caPem)
      await writeFile(join(dir, 'secret-clamp'), await second.issueSecret('node-clamp'), { mode: 0o600 })
      await writeFile(
        join(dir, 'agent-clamp.env'),
        envFor(second, 'node-clamp', join(dir, 'secret-clamp'), join(dir, 'pki-clamp')),
      )
      const config = loadAgentConfig({ env: { FLEETKIT_AGENT_CONFIG: join(dir, 'agent-clamp.env') }, flags: {} })
      const log = memoryLogger('agent', 'debug', () => virtual.now())
      await enroll(config, { log })
      const enrolled = new X509Certificate(await readFile(join(dir, 'pki-clamp', 'agent.pem'), 'utf8'))

      const controller = new AbortController()
      const slept: number[] = []
      const sleep = async (ms: number) => {
        slept.push(ms)
        virtual.advance(Math.max(ms, 0))
        // Let the gateway and the sockets run; no real waiting.
        await new Promise((resolve) => setImmediate(resolve))
        if (
          log.lines.some((line) => line.msg === 'certificate_renewed') ||
          virtual.now().getTime() > Date.parse(enrolled.validTo)
        )
          controller.abort()
      }
      const realStart = Date.now()
      await runAgent(config, {
        log,
        clock: virtual,
        rng: seededRng('clamp'),
        host: { root: dir, run: fakeRunner({}) },
        signal: controller.signal,
        sleep,
      })

      const renewedLine = log.lines.find((line) => line.msg === 'certificate_renewed')
      assert.ok(renewedLine, `no renewal: ${JSON.stringify(log.lines.slice(-10))}`)
      const startedLine = log.lines.find((line) => line.msg === 'agent_started')!
      const notBefore = Date.parse(enrolled.validFrom)
      const lifetime = Date.parse(enrolled.validTo) - notBefore
      const fraction = (line: Record<string, unknown>) => (Date.parse(line.time as string) - notBefore) / lifetime
      assert.ok(fraction(startedLine) < 2 / 3, `started at ${fraction(startedLine)}`)
      // Renewed at the 90% check (not at the jittered point, which no check fell on, nor 600 s later).
      assert.ok(fraction(renewedLine) >= 0.9 && fraction(renewedLine) < 0.92, `renewed at ${fraction(renewedLine)}`)
      assert.equal(
        log.lines.filter((line) => line.msg === 'renewal_not_due').length,
        0,
        'no check fell between start and the 90% point',
      )
      const renewed = new X509Certificate(await readFile(join(dir, 'pki-clamp', 'agent.pem'), 'utf8'))
      assert.notEqual(renewed.serialNumber, enrolled.serialNumber)
      assert.ok(Date.now() - realStart < 15_000, 'driven by the injected clock, not by real time')
    } finally {
      await second.close()
    }
  })
})
