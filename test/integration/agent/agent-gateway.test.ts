// Real fleetkit-agent processes (the esbuild bundle, plain node) against a real gateway and
// a real PostgreSQL: enroll, heartbeat, a `checks` job, renewal swapped in place, openssl interop.
import assert from 'node:assert/strict'
import { X509Certificate, createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { HOST_CHECK_IDS } from '../../../src/agent/host-checks.js'
import { stageIdentity } from '../../../src/agent/identity.js'
import { findCheckEntry, hasOwner, loadCheckIds } from '../../../src/checks/check-ids.js'
import { listNodeCertificates } from '../../../src/store/pki/certificates.js'
import { createJob, getJob } from '../../../src/store/scheduling/jobs.js'
import { getNode } from '../../../src/store/nodes/nodes.js'
import { type TestGateway, startTestGateway } from '../../support/gateway.js'
import { type DisposablePostgres, startDisposablePostgres } from '../../support/postgres.js'
import { HEALTHY_FILES, makeFakeRoot } from '../../support/fake-host.js'
import { copyAgentBundle } from '../../support/agent-bundle.js'
import { eventually } from '../../support/eventually.js'
import { type RunningProcess, runProcess, runProcessOk, startProcess } from '../../support/process.js'
import { IDENTITY_REFUSED_EXIT } from '../../../src/agent/identity-refusal.js'

/** The Node.js that runs the bundle: this one, or another (e.g. Node 18, as Ubuntu 24.04 ships) named by FLEETKIT_AGENT_TEST_NODE. */
const agentNode = process.env.FLEETKIT_AGENT_TEST_NODE || process.execPath
const NODE_ID = '0b6c3f52-7d4e-4a57-9a44-0f2f0c6b1e11'

const fingerprint = (pem: string) => createHash('sha256').update(new X509Certificate(pem).raw).digest('hex')
const mode = async (path: string) => (await stat(path)).mode & 0o777

describe('fleetkit-agent against a real gateway and PostgreSQL', function () {
  this.timeout(120_000)
  let postgres: DisposablePostgres
  let gw: TestGateway
  let dir: string
  let fakeRoot: string
  let bundle: string
  let envFile: string
  let secret: string
  let agent: RunningProcess | undefined
  const agentStderr = () => agent?.stderr() ?? ''
  /** Stops a wait for the running agent once it has exited. */
  const agentAlive = () => {
    const ended = agent?.exit()
    return ended ? `the agent exited (${ended.code ?? ended.signal})` : undefined
  }
  let supersededIdentity: { keyPem: string; certificatePem: string } | undefined
  const pki = () => join(dir, 'pki')
  /** The gateway's injected clock: real time plus an offset the renewal test sets. */
  const gatewayClock = { offsetMs: 0, now: () => new Date(Date.now() + gatewayClock.offsetMs) }

  const runBundle = (args: string[]) =>
    runProcess(agentNode, [bundle, ...args], { env: { PATH: process.env.PATH ?? '', FLEETKIT_AGENT_CONFIG: envFile } })

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-agent-it-'))
    bundle = join(dir, 'fleetkit-agent')
    await copyAgentBundle(bundle)
    fakeRoot = await makeFakeRoot(HEALTHY_FILES)
    postgres = await startDisposablePostgres()
    // 45 s (+60 s backdating); the renewal test moves this clock instead of waiting for the certificate to age.
    gw = await startTestGateway({ postgresUrl: postgres.url, agentCertLifetimeSeconds: 45, clock: gatewayClock })
    await gw.declareNode(NODE_ID)
    secret = await gw.issueSecret(NODE_ID)
    await writeFile(join(dir, 'gateway-ca.pem'), gw.caPem)
    await writeFile(join(dir, 'enrollment-secret'), `${secret}\n`, { mode: 0o600 })
    envFile = join(dir, 'agent.env')
    await writeFile(
      envFile,
      [
        '# as the seed writes it, with every path in the test directory',
        `FLEETKIT_NODE_ID=${NODE_ID}`,
        `FLEETKIT_GATEWAY_URL=${gw.agentUrl}`,
        `FLEETKIT_ENROLL_URL=${gw.enrollUrl}`,
        `FLEETKIT_GATEWAY_CA_FILE=${join(dir, 'gateway-ca.pem')}`,
        `FLEETKIT_ENROLLMENT_SECRET_FILE=${join(dir, 'enrollment-secret')}`,
        `FLEETKIT_AGENT_PKI_DIR=${pki()}`,
        `FLEETKIT_HOST_ROOT=${fakeRoot}`,
        'FLEETKIT_DATA_MOUNT=/srv/fleet data',
        'FLEETKIT_AGENT_MIN_FREE_GB=0.001',
        'FLEETKIT_AGENT_HEARTBEAT_SECONDS=1',
        'FLEETKIT_AGENT_RENEW_CHECK_SECONDS=1',
        '',
      ].join('\n'),
    )
  })

  afterEach(function () {
    // A failing step shows what the agent said.
    if (this.currentTest?.state === 'failed')
      process.stderr.write(`agent stderr:\n${agentStderr().split('\n').slice(-30).join('\n')}\n`)
  })

  after(async () => {
    await agent?.stop('SIGKILL')
    await gw?.close()
    await postgres?.stop()
    await rm(dir, { recursive: true, force: true })
    await rm(fakeRoot, { recursive: true, force: true })
  })

  it('enrolls: stages key and certificate 0600, deletes the secret, the node is active; a second enroll is a no-op', async () => {
    const first = await runBundle(['enroll'])
    assert.equal(first.code, 0, first.stderr)
    assert.match(first.stdout, new RegExp(`^enrolled ${NODE_ID}`))
    await assert.rejects(stat(join(dir, 'enrollment-secret')), { code: 'ENOENT' })
    for (const name of ['agent.key', 'agent.pem', 'gateway-ca.pem'])
      assert.equal(await mode(join(pki(), name)), 0o600, name)
    assert.equal((await getNode(gw.db.pool, NODE_ID))?.status, 'active')
    assert.doesNotMatch(first.stderr, new RegExp(secret))
    assert.doesNotMatch(first.stderr, /PRIVATE KEY/)

    const before = await readFile(join(pki(), 'agent.pem'), 'utf8')
    const second = await runBundle(['enroll'])
    assert.equal(second.code, 0, second.stderr)
    assert.match(second.stdout, /already enrolled/)
    assert.equal(await readFile(join(pki(), 'agent.pem'), 'utf8'), before)
  })

  it('issues a certificate that openssl verifies for client authentication', async () => {
    const { stdout } = await runProcessOk('openssl', [
      'verify',
      '-purpose',
      'sslclient',
      '-CAfile',
      join(dir, 'gateway-ca.pem'),
      join(pki(), 'agent.pem'),
    ])
    assert.match(stdout, /: OK/)
  })

  it('doctor passes the identity and gateway checks of an enrolled agent', async () => {
    const outcome = await runBundle(['doctor'])
    assert.match(outcome.stdout, /^pass agent:certificate /m)
    assert.match(outcome.stdout, /^pass agent:gateway +.*accepts certificate/m)
    assert.match(outcome.stdout, /^pass agent:clock-skew /m)
    assert.match(outcome.stdout, /^pass host:data-volume /m)
  })

  it('runs: heartbeats with host facts land in the database', async () => {
    agent = startProcess(agentNode, [bundle, 'run'], {
      env: { PATH: process.env.PATH ?? '', FLEETKIT_AGENT_CONFIG: envFile },
    })
    const node = await eventually(
      'a heartbeat with facts',
      async () => {
        const row = await getNode(gw.db.pool, NODE_ID)
        return row?.hostFactsAt && row.hostCpuCount !== null ? row : undefined
      },
      { stop: agentAlive },
    )
    assert.equal(node.hostCpuCount, 5)
    assert.equal(node.hostMemoryMb, 7850)
    assert.equal(node.hostKernel, '6.8.0-45-generic')
    assert.equal(node.hostBridgeNetfilter, true)
    assert.match(node.hostAgentVersion ?? '', /^\d+\.\d+\.\d+/)
    assert.ok(node.lastSeenAt)
  })

  it('leases a queued checks job, runs the host checks and completes it', async () => {
    const job = await createJob(gw.db.pool, { nodeId: NODE_ID, kind: 'checks', now: new Date() })
    const done = await eventually(
      'the checks job to complete',
      async () => {
        const row = await getJob(gw.db.pool, job.id)
        return row && (row.status === 'succeeded' || row.status === 'failed') ? row : undefined
      },
      { stop: agentAlive },
    )
    assert.equal(done.status, 'succeeded')
    const checks = (done.result as { checks: { id: string; status: string; code?: string; detail: string }[] }).checks
    assert.deepEqual(
      checks.map((c) => c.id),
      [...HOST_CHECK_IDS],
    )
    const entries = loadCheckIds()
    for (const check of checks) {
      assert.ok(hasOwner(findCheckEntry(entries, check.id)), check.id)
      assert.ok(['pass', 'warn', 'fail'].includes(check.status))
    }
    const byId = Object.fromEntries(checks.map((c) => [c.id, c]))
    assert.equal(byId['host:br-netfilter']!.status, 'pass')
    assert.equal(byId['host:data-volume']!.status, 'pass')
    assert.equal(byId['agent:certificate']!.status === 'fail', false)
  })

  it('renews on schedule, swaps the client in the same process, and the old certificate then gets 401', async () => {
    const pid = agent!.pid
    const oldIdentity = {
      keyPem: await readFile(join(pki(), 'agent.key'), 'utf8'),
      certificatePem: await readFile(join(pki(), 'agent.pem'), 'utf8'),
    }
    const oldFingerprint = fingerprint(oldIdentity.certificatePem)
    // Move the gateway's clock to 87% of the certificate's life, past any planned point (67-85%)
    // and short of the urgent one. The agent judges "due" on the gateway's clock (the skew its
    // next heartbeat measures), as in production, so it renews on schedule without a real wait.
    const old = new X509Certificate(oldIdentity.certificatePem)
    const notBefore = Date.parse(old.validFrom)
    gatewayClock.offsetMs = Math.max(0, notBefore + 0.87 * (Date.parse(old.validTo) - notBefore) - Date.now())
    const newPem = await eventually(
      'a renewed certificate staged',
      async () => {
        const pem = await readFile(join(pki(), 'agent.pem'), 'utf8')
        return fingerprint(pem) !== oldFingerprint ? pem : undefined
      },
      { stop: agentAlive, timeoutMs: 15_000 },
    )
    gatewayClock.offsetMs = 0
    // The new certificate's first use revokes the old one; the agent heartbeats every second.
    await eventually(
      'the renewed certificate in use',
      async () => {
        const rows = await listNodeCertificates(gw.db.pool, NODE_ID)
        return rows.find((row) => row.fingerprintSha256 === fingerprint(newPem))?.firstUsedAt ?? undefined
      },
      { stop: agentAlive },
    )
    assert.equal(agent!.exit(), undefined, 'the agent kept running')
    assert.equal(agent!.pid, pid)
    const log = agentStderr()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; pid?: number })
    assert.ok(log.some((entry) => entry.msg === 'certificate_renewed'))
    assert.equal(
      log.filter((entry) => entry.msg === 'agent_started').length,
      1,
      'started once: the swap happened in place',
    )

    supersededIdentity = oldIdentity
    const refused = await gw.agent(oldIdentity, 'POST', '/v1/agent/heartbeat', { facts: {} })
    assert.equal(refused.status, 401)
    for (const name of ['agent.key', 'agent.pem', 'gateway-ca.pem'])
      assert.equal(await mode(join(pki(), name)), 0o600, name)
    const { stdout } = await runProcessOk('openssl', [
      'verify',
      '-purpose',
      'sslclient',
      '-CAfile',
      join(pki(), 'gateway-ca.pem'),
      join(pki(), 'agent.pem'),
    ])
    assert.match(stdout, /: OK/)
  })

  it('a second agent run with the superseded identity exits non-zero with AGENT_CERTIFICATE_REJECTED', async () => {
    const stalePki = join(dir, 'stale-pki')
    await stageIdentity(stalePki, supersededIdentity!.keyPem, supersededIdentity!.certificatePem, gw.caPem)
    const stale = await runProcess(agentNode, [bundle, 'run'], {
      env: { PATH: process.env.PATH ?? '', FLEETKIT_AGENT_CONFIG: envFile, FLEETKIT_AGENT_PKI_DIR: stalePki },
      timeoutMs: 30_000,
    })
    assert.ok(!stale.timedOut, 'the agent kept running with a revoked certificate')
    assert.equal(stale.code, IDENTITY_REFUSED_EXIT, 'an exit status systemd does not restart')
    assert.match(stale.stderr, /^Error \(AGENT_CERTIFICATE_REJECTED\): the gateway refused certificate serial/m)
  })

  it('stops cleanly on SIGTERM and never logs the key or the secret', async () => {
    await agent!.stop('SIGTERM')
    assert.equal(agent!.exit()?.code, 0)
    const text = agentStderr()
    assert.doesNotMatch(text, /PRIVATE KEY/)
    assert.doesNotMatch(text, new RegExp(secret))
    assert.match(text, /"msg":"agent_stopped"/)
  })
})
