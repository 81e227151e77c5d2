// `fleetkit-agent doctor` after a CA rotation the agent missed (issue 20, item 3): the gateway serves
// the end state of `fleetkit ca rotate --complete` (a server certificate from the new CA, only the new
// CA trusted) while the agent keeps its old bundle and certificate. doctor names the rotation
// (GATEWAY_CA_ROTATED) instead of an unreachable gateway, both when the agent does not trust the
// gateway's certificate and when the gateway refuses the agent's.
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { loadAgentConfig, type AgentConfig } from '../../../src/agent/config.js'
import { runDoctor } from '../../../src/agent/doctor.js'
import { enroll } from '../../../src/agent/enroll.js'
import { startIndex } from '../../../src/agent/gateway-choice.js'
import { stageIdentity } from '../../../src/agent/identity.js'
import { runAgent } from '../../../src/agent/run-loop.js'
import { seededRng } from '../../../src/config/rng.js'
import { memoryLogger } from '../../../src/log/logger.js'
import { initPki } from '../../../src/pki/init-pki.js'
import { loadPkiSet } from '../../../src/pki/pki-set.js'
import type { CheckResult } from '../../../src/protocol/check-result.js'
import { fakeHost, fakeRunner, HEALTHY_FILES, makeFakeRoot } from '../../support/fake-host.js'
import { startTestGateway, type AgentIdentityFiles, type TestGateway } from '../../support/gateway.js'
import { freePort } from '../../support/ports.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'

describe('fleetkit-agent doctor after a CA rotation it missed', function () {
  this.timeout(120_000)
  let postgres: DisposablePostgres
  let gw: TestGateway
  let dir: string
  let root: string
  let identity: AgentIdentityFiles
  let newCaPem: string

  before(async () => {
    postgres = await startDisposablePostgres()
    // The test swaps the gateway's PKI in memory (replacePkiSet); the reloader would put the one in its
    // PKI directory back at its next look (every few seconds by default), so it looks once an hour here.
    gw = await startTestGateway({ postgresUrl: postgres.url, tuning: { pkiReloadMs: 3_600_000 } })
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-doctor-rotation-'))
    root = await makeFakeRoot(HEALTHY_FILES)
    await gw.declareNode('node-away')
    identity = await gw.enroll('node-away', await gw.issueSecret('node-away'))
  })
  after(async () => {
    await gw?.close()
    await postgres?.stop()
    await rm(dir, { recursive: true, force: true })
    await rm(root, { recursive: true, force: true })
  })

  async function agentConfig(
    name: string,
    trustedPem: string,
    urls: { gateway: string; enroll: string } = { gateway: gw.agentUrl, enroll: gw.enrollUrl },
  ): Promise<AgentConfig> {
    const pkiDir = join(dir, name)
    await stageIdentity(pkiDir, identity.keyPem, identity.certificatePem, trustedPem)
    await writeFile(join(dir, `${name}.ca.pem`), gw.caPem)
    await writeFile(
      join(dir, `${name}.env`),
      [
        'FLEETKIT_NODE_ID=node-away',
        `FLEETKIT_GATEWAY_URL=${urls.gateway}`,
        `FLEETKIT_ENROLL_URL=${urls.enroll}`,
        `FLEETKIT_GATEWAY_CA_FILE=${join(dir, `${name}.ca.pem`)}`,
        `FLEETKIT_AGENT_PKI_DIR=${pkiDir}`,
        `FLEETKIT_HOST_ROOT=${root}`,
        'FLEETKIT_AGENT_REQUEST_TIMEOUT_SECONDS=5',
        '',
      ].join('\n'),
    )
    return loadAgentConfig({ env: { FLEETKIT_AGENT_CONFIG: join(dir, `${name}.env`) }, flags: {} })
  }

  async function gatewayCheck(config: AgentConfig): Promise<CheckResult> {
    const results = await runDoctor(config, { host: fakeHost(root, {}), now: () => new Date() })
    return results.find((r) => r.id === 'agent:gateway')!
  }

  it('passes before the rotation (the same agent, the same gateway)', async () => {
    const check = await gatewayCheck(await agentConfig('before', identity.caPem))
    assert.equal(check.status, 'pass', check.detail)
  })

  it('names the rotation when the gateway presents a certificate from a CA the agent does not trust yet', async () => {
    // The end state of `ca rotate --complete`: a new CA, the server certificate re-signed by it, the old CA dropped.
    const newPki = join(dir, 'rotated-pki')
    await initPki({ pkiDir: newPki, serverNames: ['localhost', '127.0.0.1'], now: new Date() })
    const rotated = await loadPkiSet(newPki, new Date())
    newCaPem = rotated.bundlePem
    gw.gateway!.replacePkiSet(rotated)

    const check = await gatewayCheck(await agentConfig('stale-bundle', identity.caPem))
    assert.equal(check.status, 'fail', check.detail)
    assert.equal(check.code, 'GATEWAY_CA_ROTATED', check.detail)
    assert.match(check.detail, /presents a certificate from a CA this agent does not trust yet/)
    assert.match(check.detail, /the fleet's CA was rotated while this agent was away/)
    assert.doesNotMatch(check.detail, /cannot reach the gateway/)
    // Two CAs made the same day share their name: the message tells them apart by fingerprint, and
    // does not read as "issuer X, signed by none of X".
    const named =
      /its issuer is named "([^"]+)", but none of the CAs in \S+ \("([^"]+)" sha256 [0-9a-f]{16}\) signed it, and CAs of one fleet may share a name/.exec(
        check.detail,
      )
    assert.ok(named, check.detail)
    assert.equal(named[1], named[2], 'the same-day CAs share a name')
  })

  it('the running agent logs the missed rotation as GATEWAY_CA_ROTATED at error, not an unreachable gateway', async () => {
    assert.ok(newCaPem, 'the rotation of the previous test')
    const config = await agentConfig('running', identity.caPem)
    const log = memoryLogger('agent', 'debug')
    const controller = new AbortController()
    const failedCalls = () => log.lines.filter((l) => l.msg === 'gateway_call_failed')
    // Each wait passes on a fake clock so the loop beats again at once; it stops after the third failed call
    // (the first diagnoses, the second keeps the diagnosis, the third, the streak's doubling, diagnoses again).
    let now = Date.now()
    const sleep = async (ms: number) => {
      now += Math.max(ms, 0)
      // A heartbeat that succeeds ends it too: the assertions below then say so instead of a timeout.
      if (failedCalls().length >= 3 || log.lines.some((l) => l.msg === 'heartbeat')) controller.abort()
      await new Promise((resolve) => setImmediate(resolve))
    }
    await runAgent(config, {
      log,
      clock: { now: () => new Date(now) },
      rng: seededRng('missed-rotation'),
      host: { root, run: fakeRunner({}) },
      signal: controller.signal,
      sleep,
    })
    const failures = failedCalls()
    assert.ok(failures.length >= 3, JSON.stringify(log.lines.slice(-5)))
    for (const failure of failures) {
      assert.equal(failure.code, 'GATEWAY_CA_ROTATED', String(failure.message))
      assert.equal(failure.level, 'error')
      assert.match(String(failure.message), /the fleet's CA was rotated while this agent was away/)
    }
  })

  it('with several gateways, names the rotation from the one that failed, though the list starts at a dead one', async () => {
    assert.ok(newCaPem, 'the rotation of the previous test')
    // The list's first gateway is down (both listeners); this node's ID starts it at the second, the rotated one.
    assert.equal(startIndex('node-away', 2), 1)
    const dead = `https://127.0.0.1:${await freePort()}`
    const config = await agentConfig('two-gateways', identity.caPem, {
      gateway: `${dead},${gw.agentUrl}`,
      enroll: `${dead},${gw.enrollUrl}`,
    })
    const check = await gatewayCheck(config)
    assert.equal(check.status, 'fail', check.detail)
    assert.equal(check.code, 'GATEWAY_CA_ROTATED', check.detail)
    assert.match(check.detail, new RegExp(`the gateway at ${gw.agentUrl} presents a certificate from a CA`))

    // The running agent: its first call fails at the rotated gateway and moves it to the dead one; the
    // failure is still named from the gateway it happened at, not from the one the agent moved to.
    const log = memoryLogger('agent', 'debug')
    const controller = new AbortController()
    let now = Date.now()
    await runAgent(config, {
      log,
      clock: { now: () => new Date(now) },
      rng: seededRng('missed-rotation-two'),
      host: { root, run: fakeRunner({}) },
      signal: controller.signal,
      sleep: async (ms: number) => {
        now += Math.max(ms, 0)
        if (log.lines.some((l) => l.msg === 'gateway_call_failed' || l.msg === 'heartbeat')) controller.abort()
        await new Promise((resolve) => setImmediate(resolve))
      },
    })
    const failed = log.lines.find((l) => l.msg === 'gateway_call_failed')
    assert.equal(failed?.code, 'GATEWAY_CA_ROTATED', JSON.stringify(log.lines.slice(-4)))
    const moved = log.lines.find((l) => l.msg === 'gateway_failover')
    assert.deepEqual([moved?.from, moved?.to], [gw.agentUrl, dead])
  })

  it('a host with no identity whose seed pinned the old CA: enroll and doctor name the rotation and the bundle to install, not a bare TLS error', async () => {
    assert.ok(newCaPem, 'the rotation of an earlier test')
    // The way back after a missed rotation: a new secret, the old identity moved away, the seed's pinned CA still the old one.
    await gw.declareNode('node-back')
    const secret = await gw.issueSecret('node-back')
    const pkiDir = join(dir, 'back-pki')
    const caFile = join(dir, 'back.ca.pem')
    await writeFile(caFile, identity.caPem)
    await writeFile(join(dir, 'back.secret'), `${secret}\n`, { mode: 0o600 })
    await writeFile(
      join(dir, 'back.env'),
      [
        'FLEETKIT_NODE_ID=node-back',
        `FLEETKIT_ENROLL_URL=${gw.enrollUrl}`,
        `FLEETKIT_GATEWAY_CA_FILE=${caFile}`,
        `FLEETKIT_ENROLLMENT_SECRET_FILE=${join(dir, 'back.secret')}`,
        `FLEETKIT_AGENT_PKI_DIR=${pkiDir}`,
        `FLEETKIT_HOST_ROOT=${root}`,
        'FLEETKIT_AGENT_REQUEST_TIMEOUT_SECONDS=5',
        '',
      ].join('\n'),
    )
    const config = await loadAgentConfig({ env: { FLEETKIT_AGENT_CONFIG: join(dir, 'back.env') }, flags: {} })
    const named = (error: { code?: string; message?: string; actions?: string[] }) => {
      assert.equal(error.code, 'GATEWAY_CA_ROTATED', error.message)
      assert.ok(
        error.actions!.some((a) => a.includes(`current ca-bundle.pem`) && a.includes(caFile)),
        error.actions!.join(' | '),
      )
      return true
    }
    await assert.rejects(enroll(config, { log: memoryLogger('agent', 'debug') }), named)
    const results = await runDoctor(config, { host: fakeHost(root, {}), now: () => new Date() })
    const check = results.find((r) => r.id === 'agent:gateway')!
    assert.equal(check.code, 'GATEWAY_CA_ROTATED', check.detail)

    // Following the advice works: the current bundle installed, the same secret enrolls.
    await writeFile(caFile, newCaPem)
    assert.equal((await enroll(config, { log: memoryLogger('agent', 'debug') })).outcome, 'enrolled')
  })

  it('names the rotation when the agent trusts the new CA but the gateway refuses its certificate from the old one', async () => {
    assert.ok(newCaPem, 'the rotation of the previous test')
    const check = await gatewayCheck(await agentConfig('old-certificate', `${identity.caPem}${newCaPem}`))
    assert.equal(check.status, 'fail', check.detail)
    assert.equal(check.code, 'GATEWAY_CA_ROTATED', check.detail)
    assert.match(check.detail, /refused this agent's certificate/)
    assert.match(check.detail, /rotation completed before this agent renewed/)
  })
})
