// Trust over time with real fleetkit-agent processes, a real gateway and PostgreSQL: a full CA
// rotation while agents heartbeat and lease (same PIDs, no failed request), an abort agents never
// notice, and recovery of an agent that was away longer than its certificate lived.
import assert from 'node:assert/strict'
import { sign, X509Certificate } from 'node:crypto'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { GatewayClient } from '../../../src/agent/gateway-client.js'
import { stageIdentity } from '../../../src/agent/identity.js'
import { generateKeyAndCsr } from '../../../src/agent/key-and-csr.js'
import { certificateFingerprintSha256 } from '../../../src/pki/fingerprint.js'
import { bundleFingerprints } from '../../../src/pki/trust-bundle.js'
import { recoverySignedBytes } from '../../../src/pki/recovery-signature.js'
import { RECOVER_CHALLENGE_PATH, RECOVER_PATH } from '../../../src/protocol/recovery.js'
import { listNodeCertificates } from '../../../src/store/pki/certificates.js'
import { createJob, getJob } from '../../../src/store/scheduling/jobs.js'
import { copyAgentBundle } from '../../support/agent-bundle.js'
import { runFleetkit, type CliRun } from '../../support/cli.js'
import { eventually } from '../../support/eventually.js'
import { HEALTHY_FILES, makeFakeRoot } from '../../support/fake-host.js'
import { startTestGateway, type TestGateway } from '../../support/gateway.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'
import { startProcess, type RunningProcess } from '../../support/process.js'

const agentNode = process.env.FLEETKIT_AGENT_TEST_NODE || process.execPath
/** What counts as a failed agent request in the agent's own log. */
const FAILURE_MESSAGES = new Set([
  'gateway_call_failed',
  'renewal_failed',
  'recovery_failed',
  'job_failed',
  'restaged_identity_unusable',
])

interface Agent {
  nodeId: string
  dir: string
  process: RunningProcess
}

function logLines(agent: Agent): { level: string; msg: string; [key: string]: unknown }[] {
  return agent.process
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
}

function failures(agent: Agent): string[] {
  return logLines(agent)
    .filter((l) => FAILURE_MESSAGES.has(l.msg) || l.level === 'error')
    .map((l) => `${agent.nodeId}: ${JSON.stringify(l)}`)
}

describe('trust over time with real agents', function () {
  this.timeout(300_000)
  let postgres: DisposablePostgres
  let root: string
  let bundle: string
  let fakeRoot: string
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleetkit-trust-'))
    bundle = await copyAgentBundle(join(root, 'fleetkit-agent'))
    fakeRoot = await makeFakeRoot(HEALTHY_FILES)
    postgres = await startDisposablePostgres()
  })
  after(async () => {
    await postgres?.stop()
    await rm(root, { recursive: true, force: true })
    await rm(fakeRoot, { recursive: true, force: true })
  })

  const agents: Agent[] = []
  afterEach(async function () {
    if (this.currentTest?.state === 'failed')
      for (const a of agents)
        process.stderr.write(`${a.nodeId} stderr:\n${a.process.stderr().split('\n').slice(-15).join('\n')}\n`)
    for (const a of agents.splice(0)) await a.process.stop('SIGKILL')
  })

  /** Enroll `nodeId` through the gateway (test-side key), stage its identity and start `fleetkit-agent run`. */
  async function startAgent(
    gw: TestGateway,
    nodeId: string,
    options: { renewCheckSeconds?: number } = {},
  ): Promise<Agent> {
    await gw.declareNode(nodeId)
    const id = await gw.enroll(nodeId, await gw.issueSecret(nodeId))
    const dir = join(root, `${nodeId}-${Date.now()}`)
    await mkdir(dir, { recursive: true, mode: 0o700 })
    await stageIdentity(join(dir, 'pki'), id.keyPem, id.certificatePem)
    await writeFile(join(dir, 'bootstrap-ca.pem'), gw.caPem)
    const envFile = join(dir, 'agent.env')
    await writeFile(
      envFile,
      [
        `FLEETKIT_NODE_ID=${nodeId}`,
        `FLEETKIT_GATEWAY_URL=${gw.agentUrl}`,
        `FLEETKIT_ENROLL_URL=${gw.enrollUrl}`,
        `FLEETKIT_GATEWAY_CA_FILE=${join(dir, 'bootstrap-ca.pem')}`,
        `FLEETKIT_AGENT_PKI_DIR=${join(dir, 'pki')}`,
        `FLEETKIT_HOST_ROOT=${fakeRoot}`,
        'FLEETKIT_DATA_MOUNT=/srv/fleet data',
        'FLEETKIT_AGENT_MIN_FREE_GB=0.001',
        'FLEETKIT_AGENT_HEARTBEAT_SECONDS=1',
        `FLEETKIT_AGENT_RENEW_CHECK_SECONDS=${options.renewCheckSeconds ?? 2}`,
        '',
      ].join('\n'),
    )
    const agent = {
      nodeId,
      dir,
      process: startProcess(agentNode, [bundle, 'run'], {
        env: { PATH: process.env.PATH ?? '', FLEETKIT_AGENT_CONFIG: envFile, FLEETKIT_LOG_LEVEL: 'debug' },
      }),
    }
    agents.push(agent)
    await eventually(
      `${nodeId} to heartbeat`,
      () => logLines(agent).some((l) => l.msg === 'heartbeat' && l.status === 200),
      { stop: () => (agent.process.exit() ? `${nodeId} exited` : undefined) },
    )
    return agent
  }

  const rotate = (gw: TestGateway, ...args: string[]): Promise<CliRun> =>
    runFleetkit(['ca', 'rotate', '--json', ...args], { env: { DATABASE_URL: gw.db.url, FLEETKIT_PKI_DIR: gw.pkiDir } })

  it('a full rotation while agents heartbeat and lease: same gateway PID, same agent PIDs, no failed agent request', async () => {
    const gw = await startTestGateway({ postgresUrl: postgres.url, mode: 'process', agentCertLifetimeSeconds: 3600 })
    try {
      const gatewayPid = gw.child!.pid
      const fleet = [await startAgent(gw, 'rot-1'), await startAgent(gw, 'rot-2'), await startAgent(gw, 'rot-3')]
      const pids = fleet.map((a) => a.process.pid)
      const oldSha = certificateFingerprintSha256(gw.caPem)
      // Jobs keep flowing through the rotation.
      const jobs: string[] = []
      const queueJobs = async () => {
        for (const a of fleet)
          jobs.push((await createJob(gw.db.pool, { nodeId: a.nodeId, kind: 'checks', now: new Date() })).id)
      }
      await queueJobs()
      // rot-3 lags behind: paused (same process) until --complete was refused for it.
      fleet[2]!.process.child.kill('SIGSTOP')

      const begun = await rotate(gw, '--begin')
      assert.equal(begun.code, 0, begun.stdout + begun.stderr)
      const newSha = begun.json.result.rotation.newCaSha256 as string
      await queueJobs()

      const renewedOntoNewCa = (nodeId: string) =>
        eventually(
          `${nodeId} to renew onto the new CA`,
          async () => {
            const certs = await listNodeCertificates(gw.db.pool, nodeId)
            return certs.some((c) => c.issuerCaSha256 === newSha && c.firstUsedAt !== null)
          },
          { timeoutMs: 60_000 },
        )
      // Told by their heartbeats, the agents renew at a jittered point of their 2 s check.
      for (const nodeId of ['rot-1', 'rot-2']) await renewedOntoNewCa(nodeId)
      const staged = await readFile(join(fleet[0]!.dir, 'pki', 'gateway-ca.pem'), 'utf8')
      assert.deepEqual(
        bundleFingerprints(staged),
        [newSha, oldSha],
        'the agent staged the bundle the renewal handed over',
      )

      const abort = await rotate(gw, '--abort')
      assert.equal(abort.json.code, 'CA_ROTATION_ABORT_REFUSED')
      const refused = await rotate(gw, '--complete')
      assert.equal(refused.json.code, 'CA_ROTATION_INCOMPLETE')
      assert.deepEqual(
        refused.json.data.nodes.map((n: { nodeId: string }) => n.nodeId),
        ['rot-3'],
      )

      fleet[2]!.process.child.kill('SIGCONT')
      await renewedOntoNewCa('rot-3')

      const done = await rotate(gw, '--complete')
      assert.equal(done.code, 0, done.stdout + done.stderr)
      await queueJobs()
      await eventually(
        'every job to complete',
        async () => {
          for (const id of jobs) if ((await getJob(gw.db.pool, id))?.status !== 'succeeded') return false
          return true
        },
        { timeoutMs: 90_000 },
      )
      // Every agent keeps working against the re-signed server certificate.
      const serverPem = await readFile(join(gw.pkiDir, 'server.pem'), 'utf8')
      assert.ok(
        new X509Certificate(serverPem).checkIssued(
          new X509Certificate(await readFile(join(gw.pkiDir, 'ca.pem'), 'utf8')),
        ),
      )
      const mark = new Date()
      await eventually(
        'every agent to heartbeat after completion',
        async () => {
          const { rows } = await gw.db.pool.query(
            'SELECT count(*)::int AS n FROM nodes WHERE id = ANY($1) AND last_seen_at > $2',
            [fleet.map((a) => a.nodeId), mark],
          )
          return rows[0].n === fleet.length
        },
        { timeoutMs: 30_000 },
      )

      // After completion each agent trusts only what the gateway hands over: the new CA alone, in the same process.
      for (const a of fleet) {
        await eventually(
          `${a.nodeId} to stage the new-CA-only bundle`,
          async () => {
            return bundleFingerprints(await readFile(join(a.dir, 'pki', 'gateway-ca.pem'), 'utf8')).join() === newSha
          },
          { timeoutMs: 30_000 },
        )
      }
      assert.equal(gw.child!.pid, gatewayPid)
      assert.equal(gw.child!.exitCode, null, 'the gateway never restarted')
      assert.deepEqual(
        fleet.map((a) => a.process.pid),
        pids,
      )
      for (const a of fleet) assert.equal(a.process.exit(), undefined, `${a.nodeId} still runs`)
      assert.deepEqual(fleet.flatMap(failures), [], 'no agent request failed during the rotation')
      const reloads = gw.logs.filter((l) => l.includes('"pki_set_replaced"')).length
      assert.ok(reloads >= 2, `the gateway reloaded its PKI at begin and at completion (${reloads})`)
    } finally {
      await gw.close()
    }
  })

  it('--abort right after --begin restores the old CA and the agents never notice', async () => {
    // The gateway does not reload on its own here: the abort lands before it would have.
    const gw = await startTestGateway({
      postgresUrl: postgres.url,
      agentCertLifetimeSeconds: 3600,
      tuning: { pkiReloadMs: 3_600_000 },
    })
    try {
      const fleet = [await startAgent(gw, 'ab-1'), await startAgent(gw, 'ab-2')]
      const before = await readFile(join(gw.pkiDir, 'ca-bundle.pem'), 'utf8')
      assert.equal((await rotate(gw, '--begin')).code, 0)
      const aborted = await rotate(gw, '--abort')
      assert.equal(aborted.code, 0, aborted.stdout + aborted.stderr)
      assert.equal(await readFile(join(gw.pkiDir, 'ca-bundle.pem'), 'utf8'), before)
      assert.equal(await gw.gateway!.reloadPki(), 'unchanged')
      const mark = new Date()
      await eventually(
        'both agents to heartbeat after the abort',
        async () => {
          const { rows } = await gw.db.pool.query(
            'SELECT count(*)::int AS n FROM nodes WHERE id = ANY($1) AND last_seen_at > $2',
            [fleet.map((a) => a.nodeId), mark],
          )
          return rows[0].n === fleet.length
        },
        { timeoutMs: 30_000 },
      )
      for (const a of fleet) {
        assert.equal((await listNodeCertificates(gw.db.pool, a.nodeId)).length, 1, `${a.nodeId} did not renew`)
        assert.equal(a.process.exit(), undefined)
      }
      assert.deepEqual(fleet.flatMap(failures), [])
    } finally {
      await gw.close()
    }
  })

  describe('recovery of an agent that was away', () => {
    /** The gateway's clock: real time plus an offset, so a certificate can be issued "long ago". */
    const clock = { offsetMs: 0, now: () => new Date(Date.now() + clock.offsetMs) }
    let gw: TestGateway
    beforeEach(async () => {
      clock.offsetMs = 0
      // No sweeper: a secret issued "hours ago" on this clock has expired on the database's, and a sweep tick
      // between its issue and the enrollment would fail the node (enrollment_refused) before the test begins.
      gw = await startTestGateway({ postgresUrl: postgres.url, agentCertLifetimeSeconds: 3600, clock, sweep: null })
    })
    afterEach(async () => {
      await gw?.close()
    })

    /** Enroll as if two hours (or `agoMs`) ago, so the certificate has expired by now. */
    async function enrolledLongAgo(nodeId: string, agoMs: number): Promise<{ dir: string; envFile: string }> {
      clock.offsetMs = -agoMs
      await gw.declareNode(nodeId)
      const id = await gw.enroll(nodeId, await gw.issueSecret(nodeId))
      clock.offsetMs = 0
      assert.ok(new Date(id.notAfter).getTime() < Date.now(), 'expired')
      const dir = join(root, `${nodeId}-${Date.now()}`)
      await mkdir(dir, { recursive: true, mode: 0o700 })
      await stageIdentity(join(dir, 'pki'), id.keyPem, id.certificatePem, gw.caPem)
      const envFile = join(dir, 'agent.env')
      await writeFile(
        envFile,
        [
          `FLEETKIT_NODE_ID=${nodeId}`,
          `FLEETKIT_GATEWAY_URL=${gw.agentUrl}`,
          `FLEETKIT_ENROLL_URL=${gw.enrollUrl}`,
          `FLEETKIT_GATEWAY_CA_FILE=${join(dir, 'pki', 'gateway-ca.pem')}`,
          `FLEETKIT_AGENT_PKI_DIR=${join(dir, 'pki')}`,
          `FLEETKIT_HOST_ROOT=${fakeRoot}`,
          'FLEETKIT_DATA_MOUNT=/srv/fleet data',
          'FLEETKIT_AGENT_MIN_FREE_GB=0.001',
          'FLEETKIT_AGENT_HEARTBEAT_SECONDS=1',
          'FLEETKIT_AGENT_RENEW_CHECK_SECONDS=600',
          '',
        ].join('\n'),
      )
      return { dir, envFile }
    }

    const run = (nodeId: string, envFile: string, dir: string): Agent => {
      const agent = {
        nodeId,
        dir,
        process: startProcess(agentNode, [bundle, 'run'], {
          env: { PATH: process.env.PATH ?? '', FLEETKIT_AGENT_CONFIG: envFile, FLEETKIT_LOG_LEVEL: 'debug' },
        }),
      }
      agents.push(agent)
      return agent
    }

    it('an agent stopped past its certificate expiry comes back by itself within the window (same PID)', async () => {
      const { dir, envFile } = await enrolledLongAgo('away-1', 2 * 3600_000)
      const agent = run('away-1', envFile, dir)
      await eventually(
        'the recovered certificate in use',
        async () => {
          const certs = await listNodeCertificates(gw.db.pool, 'away-1')
          return certs.length === 2 && certs[1]!.firstUsedAt !== null && certs[0]!.revokedAt !== null
        },
        {
          stop: () => (agent.process.exit() ? `the agent exited: ${agent.process.stderr()}` : undefined),
          timeoutMs: 60_000,
        },
      )
      assert.ok(logLines(agent).some((l) => l.msg === 'identity_recovered'))
      const { rows } = await gw.db.pool.query(`SELECT recovery_count FROM nodes WHERE id = 'away-1'`)
      assert.equal(rows[0].recovery_count, 1)
      assert.equal(agent.process.exit(), undefined, 'recovered in the same process')
    })

    it('an agent past the window gets RECOVERY_WINDOW_EXPIRED; a retired node cannot recover', async () => {
      const far = await enrolledLongAgo('away-2', 9 * 86400_000)
      const late = run('away-2', far.envFile, far.dir)
      const ended = await late.process.exited
      assert.notEqual(ended.code, 0)
      assert.match(late.process.stderr(), /RECOVERY_WINDOW_EXPIRED/)
      assert.equal((await listNodeCertificates(gw.db.pool, 'away-2')).length, 1, 'nothing issued')

      const near = await enrolledLongAgo('away-3', 2 * 3600_000)
      await gw.db.pool.query(`UPDATE nodes SET status = 'retired' WHERE id = 'away-3'`)
      const retired = run('away-3', near.envFile, near.dir)
      const stopped = await retired.process.exited
      assert.notEqual(stopped.code, 0)
      assert.match(retired.process.stderr(), /RECOVERY_REFUSED/)
      assert.equal((await listNodeCertificates(gw.db.pool, 'away-3')).length, 1, 'nothing issued')
    })

    it('a signature is good for the CSR it signed only; an agent from before that (challenge alone) still recovers', async () => {
      clock.offsetMs = -2 * 3600_000
      await gw.declareNode('away-4')
      const expired = await gw.enroll('away-4', await gw.issueSecret('away-4'))
      clock.offsetMs = 0
      const client = new GatewayClient(gw.enrollUrl, { ca: gw.caPem }, { timeoutMs: 10_000, maxSockets: 1 })
      try {
        const attempt = async (csrSigned: string, csrSent: string, version: 1 | 2) => {
          const asked = await client.request('POST', RECOVER_CHALLENGE_PATH, { node_id: 'away-4' })
          const { challenge } = asked.body as { challenge: string }
          const signature = sign('sha256', recoverySignedBytes(challenge, csrSigned, version), {
            key: expired.keyPem,
            dsaEncoding: 'der',
          }).toString('base64')
          return client.request('POST', RECOVER_PATH, {
            node_id: 'away-4',
            challenge,
            certificate_pem: expired.certificatePem,
            signature,
            csr_pem: csrSent,
            ...(version === 2 ? { signature_version: 2 } : {}),
          })
        }
        const mine = await generateKeyAndCsr('away-4')
        const theirs = await generateKeyAndCsr('away-4')
        const swapped = await attempt(mine.csrPem, theirs.csrPem, 2)
        assert.equal(swapped.status, 401, JSON.stringify(swapped.body))
        assert.equal((await listNodeCertificates(gw.db.pool, 'away-4')).length, 1, 'nothing issued for the swapped CSR')

        const older = await attempt(mine.csrPem, mine.csrPem, 1)
        assert.equal(older.status, 200, JSON.stringify(older.body))
        const { rows } = await gw.db.pool.query(
          `SELECT data FROM events WHERE kind = 'node_recovered' AND node_id = 'away-4'`,
        )
        assert.equal(rows.length, 1)
        assert.equal(rows[0].data.signature, 'challenge_only')
      } finally {
        client.close()
      }
    })
  })
})
