// TLS session ticket keys are kept with the PKI (issue 12, item 7): an agent's session survives a
// gateway restart (and resumes on another gateway reading the same PKI directory), so a reconnect
// storm after a restart costs resumed handshakes, not full ones.
import assert from 'node:assert/strict'
import { stat } from 'node:fs/promises'
import { Agent, request } from 'node:https'
import type { TLSSocket } from 'node:tls'

import { startGateway, type RunningGateway } from '../../../src/gateway/gateway.js'
import { ticketKeysPath } from '../../../src/gateway/ticket-keys.js'
import { silentLogger } from '../../../src/log/logger.js'
import { loadPkiSet } from '../../../src/pki/pki-set.js'
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
  let restarted: RunningGateway | undefined
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
    restarted = await startGateway({
      pool: gw.db.pool,
      pki: await loadPkiSet(gw.pkiDir, new Date()),
      pkiDir: gw.pkiDir,
      enrollBind: { host: '127.0.0.1', port: 0 },
      agentBind: { host: '127.0.0.1', port },
      agentCertLifetimeSeconds: 86400,
      logger: silentLogger,
      tuning: TEST_TUNING,
    })
    assert.deepEqual(await get(gw.agentUrl, agent), { status: 200, resumed: true }, 'resumed after the restart')
    agent.destroy()
  })
})
