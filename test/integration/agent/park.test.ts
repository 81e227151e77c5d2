// `fleetkit node park` is reversible: the running agent of a parked node keeps heartbeating (no
// leases) and is back at `node unpark` by itself. It used to get 401 and exit 77 for good, leaving
// an unparked node with no agent. The agent runs in this process on an injected clock.
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { loadAgentConfig } from '../../../src/agent/config.js'
import { enroll } from '../../../src/agent/enroll.js'
import { runAgent } from '../../../src/agent/run-loop.js'
import { fixedClock } from '../../../src/config/clock.js'
import { seededRng } from '../../../src/config/rng.js'
import { parkNode, unparkNode } from '../../../src/lifecycle/node/node-park.js'
import { memoryLogger } from '../../../src/log/logger.js'
import { getNode } from '../../../src/store/nodes/nodes.js'
import { type TestGateway, startTestGateway } from '../../support/gateway.js'
import { type DisposablePostgres, startDisposablePostgres } from '../../support/postgres.js'
import { fakeRunner } from '../../support/fake-host.js'

const NODE_ID = 'node-park'
const LIFETIME_SECONDS = 60

describe('fleetkit-agent of a parked node', function () {
  this.timeout(120_000)
  let postgres: DisposablePostgres
  let gw: TestGateway
  let dir: string
  const virtual = fixedClock(new Date())

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-agent-park-'))
    postgres = await startDisposablePostgres()
    // Short-lived certificates, so one can expire while its node is parked (no test waits for it).
    gw = await startTestGateway({
      postgresUrl: postgres.url,
      agentCertLifetimeSeconds: LIFETIME_SECONDS,
      clock: virtual,
    })
    await writeFile(join(dir, 'gateway-ca.pem'), gw.caPem)
  })

  /** Declares and enrolls `nodeId` at the gateway's clock now; the agent's configuration. */
  async function enrolled(nodeId: string) {
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
    return config
  }

  after(async () => {
    await gw?.close()
    await postgres?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('keeps heartbeating while parked, asks for no work, and is back after unpark', async () => {
    const config = await enrolled(NODE_ID)
    const log = memoryLogger('agent', 'debug', () => virtual.now())
    const statuses = () =>
      log.lines.filter((line) => line.msg === 'heartbeat' && line.status === 200).map((line) => line.node_status)
    const controller = new AbortController()
    let step: 'active' | 'parked' | 'unparked' = 'active'
    let leasesWhileParked = 0
    /** The last line looked at: lines after it are new since the previous sleep. */
    let seen = 0
    const sleep = async (ms: number) => {
      virtual.advance(Math.max(ms, 0))
      // The gateway hears the park through PostgreSQL (LISTEN): real time must pass, a little at a time.
      await new Promise((resolve) => setTimeout(resolve, 10))
      const fresh = log.lines.slice(seen)
      seen = log.lines.length
      const beats = statuses()
      if (step === 'active' && beats.length >= 2) {
        await parkNode({ pool: gw.db.pool, nodeId: NODE_ID, actor: 'test' })
        step = 'parked'
      } else if (step === 'parked') {
        leasesWhileParked += fresh.filter((line) => line.msg === 'lease_refused').length
        if (beats.filter((status) => status === 'parked').length >= 3) {
          await unparkNode({ pool: gw.db.pool, nodeId: NODE_ID, actor: 'test' })
          step = 'unparked'
        }
      } else if (step === 'unparked' && beats.at(-1) === 'active') controller.abort()
      if (virtual.now().getTime() - start > 3_600_000) controller.abort()
    }
    const start = virtual.now().getTime()
    // Rejects (AGENT_CERTIFICATE_REJECTED) if the gateway refuses the parked node's certificate.
    await runAgent(config, {
      log,
      clock: virtual,
      rng: seededRng('park'),
      host: { root: dir, run: fakeRunner({}) },
      signal: controller.signal,
      sleep,
    })

    assert.equal(step, 'unparked', `never unparked: ${JSON.stringify(log.lines.slice(-10))}`)
    const beats = statuses()
    assert.ok(beats.filter((status) => status === 'parked').length >= 3, beats.join(' '))
    assert.equal(beats.at(-1), 'active', 'heartbeats answered for the active node again')
    assert.equal(leasesWhileParked, 0, 'no lease asked for while parked')
    assert.deepEqual(
      log.lines.filter((line) => line.msg === 'node_parked' || line.msg === 'node_unparked').map((line) => line.msg),
      ['node_parked', 'node_unparked'],
    )
    await gw.flushHeartbeats()
    assert.equal((await getNode(gw.db.pool, NODE_ID))?.status, 'active')
  })

  it('recovers a certificate that expired while the parked host was off, and stays parked', async () => {
    // Enrolled 200 s ago (60 s certificate, 60 s backdating): expired now on both clocks.
    virtual.set(new Date(Date.now() - 200_000))
    const config = await enrolled('node-park-off')
    virtual.set(new Date())
    await parkNode({ pool: gw.db.pool, nodeId: 'node-park-off', actor: 'test' })
    const log = memoryLogger('agent', 'debug', () => virtual.now())
    const controller = new AbortController()
    const start = virtual.now().getTime()
    const sleep = async (ms: number) => {
      virtual.advance(Math.max(ms, 0))
      await new Promise((resolve) => setImmediate(resolve))
      const beats = log.lines.filter((line) => line.msg === 'heartbeat' && line.node_status === 'parked')
      if (beats.length >= 2 || virtual.now().getTime() - start > 600_000) controller.abort()
    }
    // Rejects (RECOVERY_REFUSED) if the gateway refuses to recover a parked node.
    await runAgent(config, {
      log,
      clock: virtual,
      rng: seededRng('park-off'),
      host: { root: dir, run: fakeRunner({}) },
      signal: controller.signal,
      sleep,
    })
    assert.equal(log.lines.filter((line) => line.msg === 'identity_recovered').length, 1)
    assert.ok(log.lines.some((line) => line.msg === 'heartbeat' && line.node_status === 'parked'))
    assert.equal((await getNode(gw.db.pool, 'node-park-off'))?.status, 'parked', 'recovery does not unpark')
  })
})
