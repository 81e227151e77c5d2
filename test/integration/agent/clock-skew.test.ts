// A host clock ten minutes behind the gateway's: the agent names it CLOCK_SKEW (from the
// gateway's server_time) instead of reporting a bare TLS handshake error.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

import { type TestGateway, startTestGateway } from '../../support/gateway.js'
import { type DisposablePostgres, startDisposablePostgres } from '../../support/postgres.js'
import { copyAgentBundle } from '../../support/agent-bundle.js'

const run = promisify(execFile)
/** The Node.js that runs the bundle: this one, or another (e.g. Node 18, as Ubuntu 24.04 ships) named by FLEETKIT_AGENT_TEST_NODE. */
const agentNode = process.env.FLEETKIT_AGENT_TEST_NODE || process.execPath
const SKEW_MS = 600_000

describe('fleetkit-agent with a skewed clock', function () {
  this.timeout(120_000)
  let postgres: DisposablePostgres
  let gw: TestGateway
  let dir: string
  let bundle: string

  const runBundle = async (args: string[]) => {
    try {
      const { stdout, stderr } = await run(agentNode, [bundle, ...args], { env: { PATH: process.env.PATH ?? '', FLEETKIT_AGENT_CONFIG: join(dir, 'agent.env') } })
      return { code: 0, stdout, stderr }
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string }
      return { code: e.code, stdout: e.stdout, stderr: e.stderr }
    }
  }

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
    assert.match(doctor.stdout, /^fail agent:gateway +\(CLOCK_SKEW\) this host's clock is (59\d|600|60\d) s behind the gateway's/m)
    assert.match(doctor.stdout, /^fail agent:clock-skew +\(CLOCK_SKEW\)/m)
    assert.match(doctor.stdout, /^fail agent:certificate +\(CLOCK_SKEW\) the certificate is not valid before/m)
  })

  it('run logs CLOCK_SKEW by name rather than a TLS error, and keeps trying', async () => {
    const { spawn } = await import('node:child_process')
    const agent = spawn(agentNode, [bundle, 'run'], { env: { PATH: process.env.PATH ?? '', FLEETKIT_AGENT_CONFIG: join(dir, 'agent.env') }, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    agent.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    try {
      const deadline = Date.now() + 20_000
      while (!/"code":"CLOCK_SKEW"/.test(stderr) && Date.now() < deadline && agent.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 200))
      assert.equal(agent.exitCode, null, `the agent exited: ${stderr}`)
      const line = stderr.split('\n').find((l) => l.includes('"code":"CLOCK_SKEW"'))
      assert.ok(line, `no CLOCK_SKEW in: ${stderr.slice(-2000)}`)
      assert.equal((JSON.parse(line) as { msg: string }).msg, 'gateway_call_failed')
    } finally {
      const exited = new Promise((resolve) => agent.once('exit', resolve))
      agent.kill('SIGTERM')
      await exited
    }
  })
})
