// The gateway's drift judgement from heartbeats (issue 39): a digest against the fingerprint the last
// sync recorded; node_drifted once per change with the parts, node_drift_cleared when it matches
// again, the gauge; an unchanged digest reads and writes nothing; an old agent's heartbeat is not judged.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'

import { fixedClock } from '../../../src/config/clock.js'
import { listEvents } from '../../../src/store/events.js'
import { listNodeDrift } from '../../../src/store/nodes/node-drift.js'
import { recordNodeFingerprint } from '../../../src/store/sync/node-fingerprints.js'
import { createSyncRun, finishSyncRun, setSyncNode } from '../../../src/store/sync/sync-ledger.js'
import { startTestGateway, type AgentIdentityFiles, type TestGateway } from '../../support/gateway.js'
import { startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'

const ITEMS: Record<string, string> = {
  'nft:inet fleetkit': 'a'.repeat(64),
  'sshd:effective': 'b'.repeat(64),
  'unit:fleetkit-agent.service': 'loaded:enabled:active',
  'path:/etc/fleetkit/agent.env': '100000:644:0:0:' + 'c'.repeat(64),
}

/** The host check's report for `items` (the module's own Python computes it, as on a host). */
function hostReport(items: Record<string, string>, checkedAt: string) {
  const program = `
import json, sys
sys.path.insert(0, 'ansible/playbooks/library')
import fleetkit_fingerprint as f
items = json.loads(sys.stdin.read())
print(json.dumps({'digest': f._digest(items), 'keys_sha256': f.keys_digest(items), 'parts': f.parts(items)}))
`
  const out = JSON.parse(execFileSync('python3', ['-c', program], { input: JSON.stringify(items) }).toString())
  return { ...out, checked_at: checkedAt } as { digest: string; keys_sha256: string; parts: Record<string, string> }
}

describe('gateway: drift from heartbeats', function () {
  this.timeout(120_000)
  let pg: DisposablePostgres
  let gw: TestGateway
  let clock: ReturnType<typeof fixedClock>
  let agent: AgentIdentityFiles
  // The gateway's clock starts now (to the second): certificates it issues are checked by TLS on the real clock.
  const start = new Date(Math.floor(Date.now() / 1000) * 1000)
  const at = (seconds: number) => new Date(start.getTime() + seconds * 1000).toISOString().replace('.000Z', 'Z')
  const inSync = hostReport(ITEMS, at(0))
  const nftAdded = hostReport({ ...ITEMS, 'nft:inet fleetkit': 'e'.repeat(64) }, at(60))
  const alsoSshd = hostReport(
    { ...ITEMS, 'nft:inet fleetkit': 'e'.repeat(64), 'sshd:effective': 'f'.repeat(64) },
    at(120),
  )

  before(async () => {
    pg = await startDisposablePostgres()
    clock = fixedClock(start)
    gw = await startTestGateway({ postgresUrl: pg.url, clock, tuning: { heartbeatFlushMs: 3_600_000 } })
    await gw.declareNode('node-a')
    agent = await gw.enroll('node-a', await gw.issueSecret('node-a'))
    const run = await createSyncRun(gw.db.pool, {
      kind: 'sync',
      revision: null,
      definitionSha256: 'd'.repeat(64),
      planHash: 'e'.repeat(64),
      plan: {},
      startedBy: 't',
      pid: 1,
      nodes: [{ nodeId: 'node-a', phase: 'canary', state: 'pending' }],
    })
    await setSyncNode(gw.db.pool, run.id, 'node-a', { state: 'converged' })
    await finishSyncRun(gw.db.pool, run.id, 'converged')
    await recordNodeFingerprint(gw.db.pool, {
      nodeId: 'node-a',
      inputHash: '1'.repeat(64),
      digest: inSync.digest,
      items: ITEMS,
      resources: [],
      runId: run.id,
      recordedAt: clock.now(),
    })
  })
  after(async () => {
    await gw?.close()
    await pg?.stop()
  })

  /** A heartbeat `afterMs` after the previous one (the agent's interval here: 30 s). */
  async function beat(drift: unknown, afterMs = 30_000): Promise<void> {
    clock.advance(afterMs)
    const reply = await gw.agent(agent, 'POST', '/v1/agent/heartbeat', { facts: null, ...(drift ? { drift } : {}) })
    assert.equal(reply.status, 200)
    await gw.gateway!.driftSettled()
  }
  const drift = async () => (await listNodeDrift(gw.db.pool, ['node-a']))[0]
  const driftEvents = async () =>
    (await listEvents(gw.db.pool, { nodeId: 'node-a' }))
      .filter((e) => e.kind.startsWith('node_drift'))
      .map((e) => [e.kind, e.data.parts])
  const written = () => gw.gateway!.metrics.driftVerdictsWritten

  it('an old agent sends no digest: nothing is judged or written', async () => {
    await beat(undefined)
    assert.equal(await drift(), undefined)
  })

  it('the recorded digest is in sync; repeating it writes nothing more', async () => {
    await beat(inSync)
    assert.equal((await drift())!.state, 'in_sync')
    const writes = written().get({ state: 'in_sync' })
    const reads = gw.gateway!.metrics.driftReads.get()
    for (let i = 0; i < 5; i++) await beat(inSync)
    assert.equal(written().get({ state: 'in_sync' }), writes, 'an unchanged digest writes nothing')
    assert.equal(gw.gateway!.metrics.driftReads.get(), reads, 'an unchanged digest reads nothing')
    assert.deepEqual(await driftEvents(), [])
  })

  it('an nft rule added by hand: node_drifted naming nft once, the gauge counts it; sshd too: another event', async () => {
    await beat(nftAdded)
    const row = (await drift())!
    assert.equal(row.state, 'drifted')
    assert.deepEqual(row.parts, ['nft'])
    assert.equal(row.hostCheckedAt?.toISOString(), new Date(start.getTime() + 60_000).toISOString())
    await beat(nftAdded)
    await beat(nftAdded)
    assert.deepEqual(await driftEvents(), [['node_drifted', ['nft']]])
    const metrics = await gw.gateway!.lifecycleMetrics.render()
    assert.match(metrics, /fleetkit_nodes_drifted\{pool="[^"]+"\} 1/)
    await beat(alsoSshd)
    assert.deepEqual((await drift())!.parts, ['nft', 'sshd'])
    assert.deepEqual((await driftEvents()).at(-1), ['node_drifted', ['nft', 'sshd']])
  })

  it('matching again clears it with node_drift_cleared; no digest (a stopped timer) is unknown without an event', async () => {
    await beat(inSync)
    assert.equal((await drift())!.state, 'in_sync')
    assert.deepEqual((await driftEvents()).at(-1), ['node_drift_cleared', ['nft', 'sshd']])
    await beat({ unavailable: 'stale' })
    const row = (await drift())!
    assert.deepEqual([row.state, row.reason], ['unknown', 'stale'])
    assert.equal((await driftEvents()).length, 3)
    assert.match(await gw.gateway!.lifecycleMetrics.render(), /fleetkit_nodes_drifted\{pool="[^"]+"\} 0/)
  })

  it('part-way through a sync the host matches neither fingerprint: unknown (syncing), no event', async () => {
    const run = await createSyncRun(gw.db.pool, {
      kind: 'sync',
      revision: null,
      definitionSha256: 'd'.repeat(64),
      planHash: 'f'.repeat(64),
      plan: {},
      startedBy: 't',
      pid: 1,
      nodes: [{ nodeId: 'node-a', phase: 'canary', state: 'pending' }],
    })
    await beat(nftAdded)
    const row = (await drift())!
    assert.deepEqual([row.state, row.reason], ['unknown', 'syncing'])
    assert.equal((await driftEvents()).length, 3)
    await finishSyncRun(gw.db.pool, run.id, 'converged')
    // Unknown is read again after 30 s: the run ended and the host still differs, so now it is drift.
    clock.advance(30_000)
    await beat(nftAdded)
    assert.deepEqual((await drift())!.state, 'drifted')
    await beat(inSync)
  })

  it('a judgement that fails (its table away) costs the heartbeat nothing and is tried again 30 s later, not every beat', async () => {
    await gw.db.pool.query('ALTER TABLE node_drift RENAME TO node_drift_away')
    try {
      await beat(nftAdded)
    } finally {
      await gw.db.pool.query('ALTER TABLE node_drift_away RENAME TO node_drift')
    }
    const reads = gw.gateway!.metrics.driftReads.get()
    await beat(nftAdded, 15_000) // the next try is 30 s after the failure: this beat is within it
    assert.equal(gw.gateway!.metrics.driftReads.get(), reads, 'not tried again at once')
    assert.equal((await drift())!.state, 'in_sync', 'nothing written meanwhile')
    await beat(nftAdded, 15_000)
    assert.equal((await drift())!.state, 'drifted')
    await beat(inSync)
    assert.equal((await drift())!.state, 'in_sync')
  })

  it('a malformed drift field costs the judgement, not the heartbeat', async () => {
    await beat({ digest: 'not a digest' })
    assert.equal((await drift())!.state, 'in_sync', 'unchanged')
  })
})
