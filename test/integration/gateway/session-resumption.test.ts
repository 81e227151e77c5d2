// TLS session ticket keys are kept with the PKI (issue 12, item 7): an agent's session survives a
// gateway restart (and resumes on another gateway reading the same PKI directory), so a reconnect
// storm after a restart costs resumed handshakes, not full ones; `fleetkit gateway rotate-ticket-keys`
// replaces them and a running gateway takes the new ones up.
import assert from 'node:assert/strict'
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, request } from 'node:https'
import type { TLSSocket } from 'node:tls'

import type { GatewayWithControls } from '../../../src/gateway/controls.js'
import { startGatewayWithControls } from '../../../src/gateway/gateway.js'
import { ticketKeysPath } from '../../../src/gateway/tls/ticket-keys.js'
import { silentLogger } from '../../../src/log/logger.js'
import { loadPkiSet } from '../../../src/pki/pki-set.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { startTestGateway, TEST_TUNING, type TestGateway } from '../../support/gateway.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'

function get(url: string, agent: Agent): Promise<{ status: number; resumed: boolean }> {
  return new Promise((resolve, reject) => {
    request(new URL('/v1/agent/identity', url), { agent }, (res) => {
      const resumed = (res.socket as TLSSocket).isSessionReused()
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? 0, resumed }))
    })
      .on('error', reject)
      .end()
  })
}

describe('gateway: TLS sessions survive a restart', function () {
  this.timeout(120_000)
  let postgres: DisposablePostgres
  let gw: TestGateway
  let restarted: GatewayWithControls | undefined
  before(async () => {
    postgres = await startDisposablePostgres()
    gw = await startTestGateway({ postgresUrl: postgres.url })
  })
  after(async () => {
    await restarted?.close()
    await gw?.close()
    await postgres?.stop()
  })

  it('an agent resumes its session with the restarted gateway (ticket keys in the PKI directory, 0600)', async () => {
    assert.equal((await stat(ticketKeysPath(gw.pkiDir))).mode & 0o777, 0o600)
    await gw.declareNode('node-t')
    const id = await gw.enroll('node-t', await gw.issueSecret('node-t'))
    // keepAlive off: every request is a new connection, as after a restart.
    const agent = new Agent({
      ca: gw.caPem,
      key: id.keyPem,
      cert: id.certificatePem,
      keepAlive: false,
      maxCachedSessions: 10,
    })
    const first = await get(gw.agentUrl, agent)
    assert.deepEqual(first, { status: 200, resumed: false })
    assert.deepEqual(await get(gw.agentUrl, agent), { status: 200, resumed: true }, 'resumed on the same gateway')

    await gw.gateway!.close()
    const port = Number(new URL(gw.agentUrl).port)
    restarted = await startGatewayWithControls({
      pool: gw.db.pool,
      pki: await loadPkiSet(gw.pkiDir, new Date()),
      pkiDir: gw.pkiDir,
      enrollBind: { host: '127.0.0.1', port: Number(new URL(gw.enrollUrl).port) },
      agentBind: { host: '127.0.0.1', port },
      agentCertLifetimeSeconds: 86400,
      logger: silentLogger,
      tuning: TEST_TUNING,
    })
    assert.deepEqual(await get(gw.agentUrl, agent), { status: 200, resumed: true }, 'resumed after the restart')
    agent.destroy()
  })

  it('rotate-ticket-keys: the gateway takes the new keys up; a session under the old ones is a full handshake, then resumes', async () => {
    const gateway = restarted ?? gw.gateway!
    await gw.declareNode('node-r')
    const id = await gw.enroll('node-r', await gw.issueSecret('node-r'))
    const agent = new Agent({ ca: gw.caPem, key: id.keyPem, cert: id.certificatePem, keepAlive: false })
    try {
      await get(gw.agentUrl, agent)
      assert.deepEqual(await get(gw.agentUrl, agent), { status: 200, resumed: true })
      const before = await readFile(ticketKeysPath(gw.pkiDir))

      const rotated = await runFleetkit(['gateway', 'rotate-ticket-keys', '--pki-dir', gw.pkiDir, '--json'])
      assert.equal(rotated.code, 0, rotated.stderr)
      assertMatchesOutputSchema('gateway-rotate-ticket-keys', rotated.json)
      const after = await readFile(ticketKeysPath(gw.pkiDir))
      assert.equal(after.length, 48)
      assert.ok(!after.equals(before), 'new keys')
      assert.equal((await stat(ticketKeysPath(gw.pkiDir))).mode & 0o777, 0o600)
      assert.equal(
        (rotated.json as { result: { keyName: string } }).result.keyName,
        after.subarray(0, 16).toString('hex'),
      )
      // The gateway's own 2 s reload may have taken the new keys up already: either way they are in use now
      // (the resumptions below tell), and a second reload finds nothing new.
      assert.ok(['replaced', 'unchanged'].includes(await gateway.reloadTicketKeys()))
      assert.equal(await gateway.reloadTicketKeys(), 'unchanged')

      assert.deepEqual(await get(gw.agentUrl, agent), { status: 200, resumed: false }, 'the old ticket is refused')
      assert.deepEqual(await get(gw.agentUrl, agent), { status: 200, resumed: true }, 'a ticket under the new keys')
      // A PKI set replaced later (a renewed server certificate) keeps the new keys.
      gateway.replacePkiSet(gateway.currentPkiSet())
      assert.deepEqual(await get(gw.agentUrl, agent), { status: 200, resumed: true }, 'kept across a PKI replace')

      // A file that cannot be used is logged and the running keys kept.
      await writeFile(ticketKeysPath(gw.pkiDir), Buffer.alloc(7), { mode: 0o600 })
      assert.equal(await gateway.reloadTicketKeys(), 'kept')
      assert.deepEqual(await get(gw.agentUrl, agent), { status: 200, resumed: true }, 'still the running keys')
      await writeFile(ticketKeysPath(gw.pkiDir), after, { mode: 0o600 })
    } finally {
      agent.destroy()
    }
  })

  it('rotate-ticket-keys refuses a directory without a CA with CA_MISSING and writes nothing', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'fleetkit-tickets-'))
    try {
      await chmod(empty, 0o700)
      const refused = await runFleetkit(['gateway', 'rotate-ticket-keys', '--pki-dir', empty, '--json'])
      assert.notEqual(refused.code, 0)
      assertMatchesOutputSchema('gateway-rotate-ticket-keys', refused.json)
      assert.equal((refused.json as { code: string }).code, 'CA_MISSING')
      assert.deepEqual(await readdir(empty), [])
    } finally {
      await rm(empty, { recursive: true, force: true })
    }
  })
})
