// Past 90% of the lifetime the agent renews at once: on start, and by checking at the 90%
// point even when FLEETKIT_AGENT_RENEW_CHECK_SECONDS (here ten minutes) would check much later.
import assert from 'node:assert/strict'
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

import { packagePath } from '../../../src/package-root.js'
import { type TestGateway, startTestGateway } from '../../support/gateway.js'
import { type DisposablePostgres, startDisposablePostgres } from '../../support/postgres.js'

const run = promisify(execFile)
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
  let agent: ChildProcess | undefined
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
    await run(process.execPath, [packagePath('scripts', 'build-agent.mjs')], { env: { ...process.env, FLEETKIT_AGENT_OUTFILE: bundle } })
    postgres = await startDisposablePostgres()
    gw = await startTestGateway({ postgresUrl: postgres.url, agentCertLifetimeSeconds: LIFETIME_SECONDS, clock })
    await gw.declareNode('node-late')
    await writeFile(join(dir, 'gateway-ca.pem'), gw.caPem)
    await writeFile(join(dir, 'secret'), await gw.issueSecret('node-late'), { mode: 0o600 })
    await writeFile(join(dir, 'agent.env'), envFor(gw, 'node-late', join(dir, 'secret'), join(dir, 'pki')))
  })

  after(async () => {
    if (agent && agent.exitCode === null) {
      const exited = new Promise((resolve) => agent!.once('exit', resolve))
      agent.kill('SIGTERM')
      await exited
    }
    await gw?.close()
    await postgres?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('renews at once on start, with a ten-minute check interval', async () => {
    const env = { PATH: process.env.PATH ?? '', FLEETKIT_AGENT_CONFIG: join(dir, 'agent.env') }
    await run(agentNode, [bundle, 'enroll'], { env })
    const enrolled = new X509Certificate(await readFile(join(dir, 'pki', 'agent.pem'), 'utf8'))
    // Back to the real time: the certificate is now 92% through its life for both sides.
    clock.offsetMs = 0
    const lifetime = Date.parse(enrolled.validTo) - Date.parse(enrolled.validFrom)
    assert.ok((Date.now() - Date.parse(enrolled.validFrom)) / lifetime > 0.9)

    let stderr = ''
    agent = spawn(agentNode, [bundle, 'run'], { env, stdio: ['ignore', 'ignore', 'pipe'] })
    agent.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const deadline = Date.now() + 15_000
    while (!stderr.includes('"msg":"certificate_renewed"') && Date.now() < deadline && agent.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 100))
    assert.ok(stderr.includes('"msg":"certificate_renewed"'), `no renewal: ${stderr.slice(-2000)}`)
    const renewed = new X509Certificate(await readFile(join(dir, 'pki', 'agent.pem'), 'utf8'))
    assert.notEqual(renewed.serialNumber, enrolled.serialNumber)
    assert.ok(Date.parse(renewed.validTo) - Date.now() > (LIFETIME_SECONDS - 30) * 1000)
    assert.equal(agent.exitCode, null)
  })

  it('checks at the 90% point, not ten minutes later, when the planned point passed between checks', async () => {
    // 40 s + 60 s backdating: issued at 60%, so the check on start waits; the planned point
    // (67-85%) passes with no check due; the next check is clamped to the 90% point.
    const second = await startTestGateway({ postgresUrl: postgres.url, agentCertLifetimeSeconds: 40 })
    let child: ChildProcess | undefined
    try {
      await second.declareNode('node-clamp')
      await writeFile(join(dir, 'gateway-ca.pem'), second.caPem)
      await writeFile(join(dir, 'secret-clamp'), await second.issueSecret('node-clamp'), { mode: 0o600 })
      await writeFile(join(dir, 'agent-clamp.env'), envFor(second, 'node-clamp', join(dir, 'secret-clamp'), join(dir, 'pki-clamp')))
      const env = { PATH: process.env.PATH ?? '', FLEETKIT_AGENT_CONFIG: join(dir, 'agent-clamp.env') }
      await run(agentNode, [bundle, 'enroll'], { env })
      const enrolled = new X509Certificate(await readFile(join(dir, 'pki-clamp', 'agent.pem'), 'utf8'))
      let stderr = ''
      child = spawn(agentNode, [bundle, 'run'], { env, stdio: ['ignore', 'ignore', 'pipe'] })
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      const deadline = Date.now() + 60_000
      while (!stderr.includes('"msg":"certificate_renewed"') && Date.now() < deadline && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 200))
      const renewedLine = stderr.split('\n').find((line) => line.includes('"msg":"certificate_renewed"'))
      assert.ok(renewedLine, `no renewal: ${stderr.slice(-2000)}`)
      const startedLine = stderr.split('\n').find((line) => line.includes('"msg":"agent_started"'))!
      const notBefore = Date.parse(enrolled.validFrom)
      const lifetime = Date.parse(enrolled.validTo) - notBefore
      const fraction = (line: string) => (Date.parse((JSON.parse(line) as { time: string }).time) - notBefore) / lifetime
      assert.ok(fraction(startedLine) < 2 / 3, `started at ${fraction(startedLine)}`)
      // Renewed at the 90% check (not at the jittered point, which no check fell on, nor 600 s later).
      assert.ok(fraction(renewedLine) >= 0.9 && fraction(renewedLine) < 1, `renewed at ${fraction(renewedLine)}`)
    } finally {
      if (child && child.exitCode === null) {
        const exited = new Promise((resolve) => child!.once('exit', resolve))
        child.kill('SIGTERM')
        await exited
      }
      await second.close()
    }
  })
})
