// sync's enrollment step against a real database, without hosts: an enrolled, heartbeating node is given
// nothing; an enrolled node that went silent is waited for on the injected clock, then AGENT_NOT_HEARTBEATING,
// and never gets a new secret.
import assert from 'node:assert/strict'

import { fixedClock } from '../../../src/config/clock.js'
import { recordHeartbeats } from '../../../src/store/nodes/heartbeats.js'
import { insertNodeCertificate } from '../../../src/store/pki/certificates.js'
import { upsertDeclaredNode } from '../../../src/store/nodes/nodes.js'
import { ensureAgentHeartbeating } from '../../../src/sync/enrollment.js'
import type { RunContext } from '../../../src/sync/run-context.js'
import {
  freshDatabase,
  type FreshDatabase,
  startDisposablePostgres,
  type DisposablePostgres,
} from '../../support/postgres.js'

describe('sync enrollment step: what an enrolled node gets', function () {
  this.timeout(120_000)
  let server: DisposablePostgres
  let db: FreshDatabase
  const issued: string[] = []

  before(async () => {
    server = await startDisposablePostgres()
    db = await freshDatabase(server.url)
    for (const id of ['live-1', 'silent-1']) {
      await upsertDeclaredNode(db.pool, { id, pool: 'app', status: 'active' })
      const now = new Date()
      await insertNodeCertificate(db.pool, {
        nodeId: id,
        fingerprintSha256: (id === 'live-1' ? 'a' : 'b').repeat(64),
        serial: `01${id.length}`,
        notBefore: new Date(now.getTime() - 60_000),
        notAfter: new Date(now.getTime() + 86_400_000),
        issuerCaSha256: 'c'.repeat(64),
        now,
      })
    }
    await recordHeartbeats(db.pool, [{ nodeId: 'live-1', seenAt: new Date() }])
  })

  after(async () => {
    await db?.drop()
    await server?.stop()
  })

  function context(clock: ReturnType<typeof fixedClock>, progress: string[]): RunContext {
    return {
      options: {
        mode: 'apply',
        definitionPath: 'fleet.yaml',
        env: {},
        heartbeatTimeoutSeconds: 30,
        pool: db.pool,
        progress: (m: string) => progress.push(m),
        // The wait sleeps on the injected clock: no real time passes.
        sleep: (ms: number) => Promise.resolve(clock.advance(ms)),
        enrollment: {
          issueSecret: (nodeId: string) => {
            issued.push(nodeId)
            return Promise.reject(new Error('sync must not issue a secret to an enrolled node'))
          },
          gatewayCa: () => Promise.resolve(''),
        },
      },
      clock,
      sshTargets: new Map(),
    } as unknown as RunContext
  }

  it('an enrolled node that heartbeats is given nothing and converges', async () => {
    const result = await ensureAgentHeartbeating(context(fixedClock(new Date()), []), 'live-1')
    assert.deepEqual(result, { judgement: null, enrolled: false })
    assert.deepEqual(issued, [])
  })

  it('an enrolled node gone silent is waited for (bounded, with progress), then AGENT_NOT_HEARTBEATING; no secret', async () => {
    const progress: string[] = []
    const result = await ensureAgentHeartbeating(context(fixedClock(new Date()), progress), 'silent-1')
    assert.equal(result.judgement?.state, 'failed')
    assert.equal(result.judgement?.code, 'AGENT_NOT_HEARTBEATING')
    assert.match(
      result.judgement?.message ?? '',
      /enrolled but sent no heartbeat within 30 s.*fleetkit node token silent-1 --reissue/,
    )
    // One look every 250 ms of the (fake) clock for 30 s.
    assert.equal(progress.length, 120)
    assert.match(progress[0]!, /^silent-1: waiting for the agent's heartbeat \(0 s of 30 s\)$/)
    assert.deepEqual(issued, [])
  })
})
