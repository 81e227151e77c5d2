// A host clock ten minutes behind the gateway's: the agent names it CLOCK_SKEW (from the
// gateway's server_time) instead of reporting a bare TLS handshake error.
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { type TestGateway, startTestGateway } from '../../support/gateway.js'
import { type DisposablePostgres, startDisposablePostgres } from '../../support/postgres.js'
import { copyAgentBundle } from '../../support/agent-bundle.js'
import { eventually } from '../../support/eventually.js'
import { runProcess, startProcess } from '../../support/process.js'

/** The Node.js that runs the bundle: this one, or another (e.g. Node 18, as Ubuntu 24.04 ships) named by FLEETKIT_AGENT_TEST_NODE. */
const agentNode = process.env.FLEETKIT_AGENT_TEST_NODE || process.execPath
const SKEW_MS = 600_000

describe('fleetkit-agent with a skewed clock', function () {
  this.timeout(120_000)
  let postgres: DisposablePostgres
  let gw: TestGateway
  let dir: string
  let bundle: string

  const runBundle = (args: string[]) =>
    runProcess(agentNode, [bundle, ...args], {
      env: { PATH: process.env.PATH ?? '', FLEETKIT_AGENT_CONFIG: join(dir, 'agent.env') },
    })

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-agent-skew-'))
    bundle = join(dir, 'fleetkit-agent')
    await copyAgentBundle(bundle)
    postgres = await startDisposablePostgres()
    // The gateway's clock runs ten minutes ahead: the certificate it issues starts
    // (backdated 60 s) nine minutes in this host's future.
    gw = await startTestGateway({ postgresUrl: postgres.url, clock: { now: () => new Date(Date.now() + SKEW_MS) } })
    await gw.declareNode('node-skew')
    const secret = await gw.issueSecret('node-skew')
    await writeFile(join(dir, 'gateway-ca.pem'), gw.caPem)
    await writeFile(join(dir, 'secret'), secret, { mode: 0o600 })
    await writeFile(
      join(dir, 'agent.env'),
      [
        'FLEETKIT_NODE_ID=node-skew',
        `FLEETKIT_GATEWAY_URL=${gw.agentUrl}`,
        `FLEETKIT_ENROLL_URL=${gw.enrollUrl}`,
        `FLEETKIT_GATEWAY_CA_FILE=${join(dir, 'gateway-ca.pem')}`,
        `FLEETKIT_ENROLLMENT_SECRET_FILE=${join(dir, 'secret')}`,
        `FLEETKIT_AGENT_PKI_DIR=${join(dir, 'pki')}`,
        `FLEETKIT_HOST_ROOT=${dir}`,
        'FLEETKIT_AGENT_HEARTBEAT_SECONDS=1',
        'FLEETKIT_AGENT_RENEW_CHECK_SECONDS=600',
        '',
      ].join('\n'),
    )
  })

  after(async () => {
    await gw?.close()
    await postgres?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('doctor reports CLOCK_SKEW for the gateway, the clock and the not-yet-valid certificate', async () => {
    const enrolled = await runBundle(['enroll'])
    assert.equal(enrolled.code, 0, enrolled.stderr)
    const doctor = await runBundle(['doctor'])
    assert.equal(doctor.code, 1)
    assert.match(
      doctor.stdout,
      /^fail agent:gateway +\(CLOCK_SKEW\) this host's clock is (59\d|600|60\d) s behind the gateway's/m,
    )
    assert.match(doctor.stdout, /^fail agent:clock-skew +\(CLOCK_SKEW\)/m)
    assert.match(doctor.stdout, /^fail agent:certificate +\(CLOCK_SKEW\) the certificate is not valid before/m)
  })

  it('run logs CLOCK_SKEW by name rather than a TLS error, and keeps trying', async () => {
    const agent = startProcess(agentNode, [bundle, 'run'], {
      env: { PATH: process.env.PATH ?? '', FLEETKIT_AGENT_CONFIG: join(dir, 'agent.env') },
    })
    try {
      // A timeout or an early exit is reported by the assertions below, with what the agent said.
      await eventually('CLOCK_SKEW logged', () => /"code":"CLOCK_SKEW"/.test(agent.stderr()), {
        timeoutMs: 20_000,
        stop: () => (agent.exit() ? 'the agent exited' : undefined),
      }).catch(() => undefined)
      const stderr = agent.stderr()
      assert.equal(agent.exit()?.code ?? null, null, `the agent exited: ${stderr}`)
      const line = stderr.split('\n').find((l) => l.includes('"code":"CLOCK_SKEW"'))
      assert.ok(line, `no CLOCK_SKEW in: ${stderr.slice(-2000)}`)
      assert.equal((JSON.parse(line) as { msg: string }).msg, 'gateway_call_failed')
    } finally {
      await agent.stop('SIGTERM')
    }
  })
})
