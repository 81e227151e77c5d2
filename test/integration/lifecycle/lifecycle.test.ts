// The node lifecycle against a real gateway and PostgreSQL: list and show (--json by schema),
// admit refusals, drain (403 on lease while a completion lands), decommission (refused with an
// allocation, then retires and revokes), park (out of the inventory), allocations and the operator API.
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { fixedClock, systemClock } from '../../../src/config/clock.js'
import { loadHostPolicy } from '../../../src/definition/host-policy.js'
import { admitNode } from '../../../src/lifecycle/node/node-admit.js'
import { runNodeCheck } from '../../../src/lifecycle/node/node-check.js'
import { decommissionNode } from '../../../src/lifecycle/node/node-decommission.js'
import { followEvents } from '../../../src/lifecycle/view/fleet-events.js'
import { drainNode, undrainNode } from '../../../src/lifecycle/node/node-drain.js'
import { parkNode, unparkNode } from '../../../src/lifecycle/node/node-park.js'
import { renderInventory } from '../../../src/render/inventory.js'
import { reserveAllocation } from '../../../src/store/scheduling/allocations.js'
import { appendEvent, listEvents } from '../../../src/store/events.js'
import { createJob, getJob } from '../../../src/store/scheduling/jobs.js'
import { recordNodeCapacity } from '../../../src/store/nodes/node-lifecycle.js'
import { recordDriftVerdict } from '../../../src/store/nodes/node-drift.js'
import { getNode, listNodes, setNodeStatus, upsertDeclaredNode } from '../../../src/store/nodes/nodes.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { fixturePath, validDefinition } from '../../support/definition-fixture.js'
import { httpsJson, startTestGateway, type AgentIdentityFiles, type TestGateway } from '../../support/gateway.js'
import { freshDatabase, startDisposablePostgres, type DisposablePostgres } from '../../support/postgres.js'
import { closedPort, sshKeygen, startSshServer } from '../../support/ssh-server.js'

const CHECKS_OK = { checks: [{ id: 'host:br-netfilter', status: 'pass', detail: 'loaded' }] }
const CAPACITY = { cpu: 4, memoryMib: 8192, diskGib: 80 }
const code = (reply: { body: Record<string, unknown> }) => (reply.body.error as { code?: string } | undefined)?.code
const actor = 'test'

describe('node lifecycle (real gateway, real PostgreSQL)', function () {
  // Each test runs the real CLI several times (a second or two each, more on a loaded machine).
  this.timeout(300_000)
  let pg: DisposablePostgres
  let gw: TestGateway
  let stateDir: string
  const ids: Record<string, AgentIdentityFiles> = {}
  const cli = (args: string[]) =>
    runFleetkit([...args, '--json'], {
      env: { DATABASE_URL: gw.db.url, FLEETKIT_STATE_DIR: stateDir, FLEETKIT_ACTOR: 'ci' },
    })
  const enrolled = async (id: string, pool = 'build') => {
    await gw.declareNode(id, { pool })
    ids[id] = await gw.enroll(id, await gw.issueSecret(id))
    return ids[id]!
  }
  /** Time passing for the sweep and admit: the node's last heartbeat moved into the database's past. */
  const silence = (id: string, seconds: number) =>
    gw.db.pool.query(`UPDATE nodes SET last_seen_at = now() - make_interval(secs => $2) WHERE id = $1`, [id, seconds])

  before(async () => {
    pg = await startDisposablePostgres()
    gw = await startTestGateway({ postgresUrl: pg.url, sweep: null })
    stateDir = await mkdtemp(join(tmpdir(), 'fleetkit-life-'))
  })
  after(async () => {
    await gw?.close()
    await pg?.stop()
    await rm(stateDir, { recursive: true, force: true })
  })

  it('admit refuses a silent node, one without capacity, one failing its checks; then makes it schedulable with an event', async () => {
    await enrolled('adm-1')
    await silence('adm-1', 120)
    await assert.rejects(admitNode({ pool: gw.db.pool, nodeId: 'adm-1', actor }), {
      code: 'NODE_SILENT',
      message: /last heartbeated 120 s ago/,
    })
    await silence('adm-1', 1)
    await assert.rejects(admitNode({ pool: gw.db.pool, nodeId: 'adm-1', actor }), { code: 'NODE_CAPACITY_UNKNOWN' })
    const job = await createJob(gw.db.pool, { nodeId: 'adm-1', kind: 'checks', now: new Date() })
    const lease = await gw.agent(ids['adm-1']!, 'POST', '/v1/agent/lease', {})
    const failing = {
      checks: [{ id: 'host:br-netfilter', status: 'fail', code: 'BR_NETFILTER_OFF', detail: 'not loaded' }],
    }
    assert.equal(
      (
        await gw.agent(ids['adm-1']!, 'POST', `/v1/agent/jobs/${job.id}/complete`, {
          lease_token: (lease.body.job as { lease_token: string }).lease_token,
          status: 'succeeded',
          result: failing,
        })
      ).status,
      200,
    )
    await assert.rejects(admitNode({ pool: gw.db.pool, nodeId: 'adm-1', actor, capacity: CAPACITY }), {
      code: 'NODE_CHECKS_FAILING',
      message: /host:br-netfilter/,
    })
    assert.equal(
      (await getNode(gw.db.pool, 'adm-1'))!.capacityCpu,
      null,
      'a refused admit writes nothing, not even the capacity',
    )
    const again = await createJob(gw.db.pool, { nodeId: 'adm-1', kind: 'checks', now: new Date() })
    const lease2 = await gw.agent(ids['adm-1']!, 'POST', '/v1/agent/lease', {})
    // A declared container's kernel check does not apply: it never blocks admit.
    const containerChecks = {
      checks: [
        { id: 'host:disk-free', status: 'pass', detail: '40 GiB free' },
        { id: 'host:br-netfilter', status: 'not_applicable', detail: 'the node declares container: true' },
      ],
    }
    await gw.agent(ids['adm-1']!, 'POST', `/v1/agent/jobs/${again.id}/complete`, {
      lease_token: (lease2.body.job as { lease_token: string }).lease_token,
      status: 'succeeded',
      result: containerChecks,
    })
    const admitted = await admitNode({ pool: gw.db.pool, nodeId: 'adm-1', actor, capacity: CAPACITY })
    assert.equal(admitted.schedulable, true)
    assert.equal(admitted.changed, true)
    assert.deepEqual((await listEvents(gw.db.pool, { nodeId: 'adm-1', kind: 'node_admitted' })).length, 1)
    await setNodeStatus(gw.db.pool, 'adm-1', 'retired')
    await assert.rejects(admitNode({ pool: gw.db.pool, nodeId: 'adm-1', actor }), { code: 'NODE_STATE_CONFLICT' })
    await assert.rejects(admitNode({ pool: gw.db.pool, nodeId: 'nobody', actor }), { code: 'NODE_UNKNOWN' })
  })

  it('node admit --definition records maxCapacity from fleet.yaml (CLI, --json by schema)', async () => {
    await enrolled('build-1')
    const run = await cli(['node', 'admit', 'build-1', '--definition', fixturePath('valid.yaml')])
    assert.equal(run.code, 0, run.stdout + run.stderr)
    assertMatchesOutputSchema('node-admit', run.json)
    assert.equal(run.json.result.schedulable, true)
    // valid.yaml: build-1 offers its cx32 less the host reserve.
    const node = (await getNode(gw.db.pool, 'build-1'))!
    assert.deepEqual([node.capacityCpu, node.capacityMemoryMib, node.capacityDiskGib], [3.5, 7168, 60])
    const refused = await cli(['node', 'admit', 'nobody'])
    assert.equal(refused.json.code, 'NODE_UNKNOWN')
    assertMatchesOutputSchema('node-admit', refused.json)
  })

  it('drain: 403 node_not_active on lease while the completion of a running job lands; --wait returns once it ended', async () => {
    const agent = await enrolled('drn-1')
    const job = await createJob(gw.db.pool, { nodeId: 'drn-1', kind: 'checks', now: new Date() })
    const leased = (await gw.agent(agent, 'POST', '/v1/agent/lease', {})).body.job as { lease_token: string }
    await createJob(gw.db.pool, { nodeId: 'drn-1', kind: 'checks', now: new Date() })
    const drained = await drainNode({ pool: gw.db.pool, nodeId: 'drn-1', actor, clock: systemClock })
    assert.equal(drained.to, 'draining')
    assert.deepEqual(drained.liveLeases, [job.id])
    const refused = await gw.agent(agent, 'POST', '/v1/agent/lease', {})
    assert.equal(refused.status, 403)
    assert.equal(code(refused), 'node_not_active')
    const waiting = drainNode({
      pool: gw.db.pool,
      nodeId: 'drn-1',
      actor,
      clock: systemClock,
      waitSeconds: 30,
      pollMs: 50,
    })
    const done = await gw.agent(agent, 'POST', `/v1/agent/jobs/${job.id}/complete`, {
      lease_token: leased.lease_token,
      status: 'succeeded',
      result: CHECKS_OK,
    })
    assert.equal(done.status, 200)
    assert.equal((await getJob(gw.db.pool, job.id))!.status, 'succeeded')
    const waited = await waiting
    assert.deepEqual(waited.liveLeases, [])
    assert.equal(waited.changed, false, 'draining again changes nothing')
    assert.equal((await listEvents(gw.db.pool, { nodeId: 'drn-1', kind: 'node_draining' })).length, 1)
  })

  it('decommission refuses with an active allocation, then retires, revokes every certificate and the agent is refused', async () => {
    const agent = await enrolled('dec-1')
    await recordNodeCapacity(gw.db.pool, 'dec-1', CAPACITY)
    await admitNode({ pool: gw.db.pool, nodeId: 'dec-1', actor })
    const allocation = await reserveAllocation(gw.db.pool, {
      nodeId: 'dec-1',
      owner: 'ci',
      cpu: 1,
      memoryMib: 1024,
      diskGib: 10,
      actor,
    })
    await assert.rejects(decommissionNode({ pool: gw.db.pool, nodeId: 'dec-1', actor, clock: systemClock }), {
      code: 'NODE_STATE_CONFLICT',
      message: /active/,
    })
    await drainNode({ pool: gw.db.pool, nodeId: 'dec-1', actor, clock: systemClock })
    await assert.rejects(decommissionNode({ pool: gw.db.pool, nodeId: 'dec-1', actor, clock: systemClock }), {
      code: 'NODE_HAS_ALLOCATIONS',
    })
    assert.equal((await getNode(gw.db.pool, 'dec-1'))!.status, 'draining', 'a refusal changes nothing')
    assert.equal((await gw.agent(agent, 'POST', '/v1/agent/heartbeat', {})).status, 200)
    const release = await cli(['alloc', 'release', allocation.id])
    assert.equal(release.code, 0, release.stdout)
    assertMatchesOutputSchema('alloc-release', release.json)
    const run = await cli(['node', 'decommission', 'dec-1', '--yes'])
    assert.equal(run.code, 0, run.stdout + run.stderr)
    assertMatchesOutputSchema('node-decommission', run.json)
    assert.equal(run.json.result.to, 'retired')
    assert.equal(run.json.result.revokedCertificates, 1)
    // No address and no pinned key: its agent is not dialled, and the retirement does not wait for it.
    assert.deepEqual(run.json.result.agentStop, {
      state: 'not_stopped',
      reason: 'host_key_not_pinned',
      detail: 'dec-1 has no pinned SSH host key',
    })
    assert.match(run.json.result.message, /it stops itself when the gateway refuses its revoked certificate/)
    const refused = await gw.agent(agent, 'POST', '/v1/agent/heartbeat', {})
    assert.equal(refused.status, 401)
    assert.equal(code(refused), 'certificate_refused')
    const twice = await cli(['node', 'decommission', 'dec-1', '--yes'])
    assert.equal(twice.json.result.changed, false)
    assert.equal((await listEvents(gw.db.pool, { nodeId: 'dec-1', kind: 'node_retired' })).length, 1)
  })

  it("decommission stops a reachable node's agent over SSH with its pinned key (--definition's ssh block); an unreachable one never blocks it", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleetkit-life-ssh-'))
    const host = await sshKeygen(dir, 'host')
    await sshKeygen(dir, 'id')
    const server = await startSshServer(host.private, () => ({ code: 0 }))
    try {
      /** valid.yaml with node ID declared on 127.0.0.1:PORT as the operator account ops. */
      const definitionFor = async (id: string, port: number) => {
        const path = join(dir, `fleet-${id}.yaml`)
        const text = (await readFile(fixturePath('valid.yaml'), 'utf8')).replace(
          'canary: build-1',
          `  - id: ${id}\n    pool: build\n    state: active\n    ssh: { host: 127.0.0.1, port: ${port}, user: ops }\n    maxCapacity: { cpu: 1.5, memoryMiB: 3072, diskGiB: 20 }\ncanary: build-1`,
        )
        await writeFile(path, text)
        return path
      }
      const env = { ANSIBLE_PRIVATE_KEY_FILE: join(dir, 'id'), HOME: dir }
      const retire = async (id: string, port: number) => {
        const agent = await enrolled(id)
        // The key a worker seed pins in the state (the definition does not pin stop-1's).
        await gw.db.pool.query(`UPDATE nodes SET host_key_public = $2 WHERE id = $1`, [id, host.public])
        await drainNode({ pool: gw.db.pool, nodeId: id, actor, clock: systemClock })
        const path = await definitionFor(id, port)
        const run = await runFleetkit(['node', 'decommission', id, '--yes', '--json', '--definition', path], {
          env: { DATABASE_URL: gw.db.url, FLEETKIT_STATE_DIR: stateDir, ...env },
        })
        assert.equal(run.code, 0, run.stdout + run.stderr)
        assertMatchesOutputSchema('node-decommission', run.json)
        assert.equal(run.json.result.to, 'retired')
        assert.equal((await gw.agent(agent, 'POST', '/v1/agent/heartbeat', {})).status, 401)
        return run.json.result as { agentStop: { state: string; reason?: string; detail: string }; message: string }
      }
      const stopped = await retire('stop-1', server.port)
      assert.deepEqual(stopped.agentStop, {
        state: 'stopped',
        detail: 'fleetkit-agent.service disabled and stopped on stop-1',
      })
      assert.deepEqual(server.commands, ['sudo -n systemctl disable --now fleetkit-agent.service'])
      assert.match(stopped.message, /retired \(was draining\).*; its agent is stopped and disabled/)
      // The same node declared on a port nothing answers: retired all the same, the line says what follows.
      const away = await retire('stop-2', await closedPort(host.private))
      assert.deepEqual([away.agentStop.state, away.agentStop.reason], ['not_stopped', 'unreachable'])
      assert.match(
        away.message,
        /its agent could not be stopped over SSH \(stop-2 is unreachable .*\); it stops itself when the gateway refuses its revoked certificate/,
      )
      assert.equal(server.commands.length, 1, 'nothing else was run')
    } finally {
      await server.close()
      await rm(dir, { recursive: true, force: true })
    }
  })

  it("park takes a node out of the inventory's sync groups and out of lost detection; unpark brings it back without a new identity", async () => {
    const agent = await enrolled('db-1', 'database')
    const before = renderInventory({
      definition: validDefinition(),
      stateNodes: await listNodes(gw.db.pool),
      hostPolicy: loadHostPolicy(),
      knownHostsPath: '/tmp/known_hosts',
    })
    assert.ok(before.hosts.includes('db-1'))
    const parked = await parkNode({ pool: gw.db.pool, nodeId: 'db-1', actor })
    assert.equal(parked.to, 'parked')
    const after = renderInventory({
      definition: validDefinition(),
      stateNodes: await listNodes(gw.db.pool),
      hostPolicy: loadHostPolicy(),
      knownHostsPath: '/tmp/known_hosts',
    })
    assert.ok(!after.hosts.includes('db-1'))
    assert.ok(after.excluded.includes('db-1'))
    await silence('db-1', 3600)
    const sweep = await cli(['sweep'])
    assertMatchesOutputSchema('sweep', sweep.json)
    assert.ok(
      !sweep.json.result.lost.some((n: { nodeId: string }) => n.nodeId === 'db-1'),
      'a parked node is never lost',
    )
    const unparked = await unparkNode({ pool: gw.db.pool, nodeId: 'db-1', actor })
    assert.equal(unparked.to, 'active')
    const sweep2 = await cli(['sweep'])
    assert.ok(
      !sweep2.json.result.unhealthy.some((n: { nodeId: string }) => n.nodeId === 'db-1'),
      'silence counts from the unpark',
    )
    assert.equal(
      (await gw.agent(agent, 'POST', '/v1/agent/heartbeat', {})).status,
      200,
      'the same certificate still works',
    )
    assert.deepEqual(
      (await listEvents(gw.db.pool, { nodeId: 'db-1' }))
        .map((e) => e.kind)
        .filter((k) => k.startsWith('node_p') || k.startsWith('node_u')),
      ['node_parked', 'node_unparked'],
    )
  })

  it('alloc reserve refuses over-capacity and non-schedulable targets with coded errors; the operator API does the same over loopback', async () => {
    await enrolled('cap-1')
    await recordNodeCapacity(gw.db.pool, 'cap-1', { cpu: 2, memoryMib: 4096, diskGib: 40 })
    const early = await cli(['alloc', 'reserve', '--node', 'cap-1', '--owner', 'ci', '--cpu', '1'])
    assert.equal(early.json.code, 'NODE_NOT_SCHEDULABLE')
    assertMatchesOutputSchema('alloc-reserve', early.json)
    await admitNode({ pool: gw.db.pool, nodeId: 'cap-1', actor })
    const ok = await cli([
      'alloc',
      'reserve',
      '--node',
      'cap-1',
      '--owner',
      'ci',
      '--cpu',
      '1.5',
      '--memory',
      '2048',
      '--disk',
      '10',
    ])
    assert.equal(ok.code, 0, ok.stdout + ok.stderr)
    assertMatchesOutputSchema('alloc-reserve', ok.json)
    const over = await cli(['alloc', 'reserve', '--node', 'cap-1', '--owner', 'ci', '--cpu', '1'])
    assert.equal(over.json.code, 'ALLOCATION_OVER_CAPACITY')
    assert.match(over.json.message, /cpu 2\.5 > 2/)
    const api = (method: string, path: string, body?: unknown) =>
      fetch(`${gw.metricsUrl}${path}`, {
        method,
        ...(method === 'POST'
          ? { body: JSON.stringify(body ?? {}), headers: { 'content-type': 'application/json' } }
          : {}),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }))
    const simple = await fetch(`${gw.metricsUrl}/v1/operator/allocations`, {
      method: 'POST',
      body: JSON.stringify({ node_id: 'cap-1', owner: 'csrf', cpu: 0.1 }),
      headers: { 'content-type': 'text/plain' },
    })
    assert.equal(simple.status, 415, 'a cross-site "simple" POST from a browser on the gateway host is refused')
    const apiOver = await api('POST', '/v1/operator/allocations', {
      node_id: 'cap-1',
      owner: 'platform',
      cpu: 0.5,
      memory_mib: 4096,
    })
    assert.equal(apiOver.status, 409)
    assert.equal(code(apiOver), 'allocation_over_capacity')
    const apiOk = await api('POST', '/v1/operator/allocations', {
      node_id: 'cap-1',
      owner: 'platform',
      cpu: 0.5,
      memory_mib: 1024,
      disk_gib: 5,
    })
    assert.equal(apiOk.status, 200, JSON.stringify(apiOk.body))
    // Text no column can store (an unpaired surrogate in the body, a NUL in the query or path) is a 400, and nothing is written.
    // Nor text a terminal would obey when alloc list and node show print it: ESC, a right-to-left override, an
    // isolate, a zero-width space (the CLI's --owner refuses the same).
    for (const owner of [
      'plat\ud800form',
      'plat\u0000form',
      '\udfff',
      'a\u001b[2Jb',
      'ab\u202ecd',
      'x\u2066y',
      'z\u200bw',
    ]) {
      const refused = await api('POST', '/v1/operator/allocations', { node_id: 'cap-1', owner, cpu: 0.1 })
      assert.equal(refused.status, 400, JSON.stringify(refused.body))
      assert.equal(code(refused), 'request_invalid')
    }
    for (const path of ['/v1/operator/allocations?node=%00', '/v1/operator/allocations?node=cap%00-1'])
      assert.equal(code(await api('GET', path)), 'request_invalid', path)
    assert.equal(code(await api('POST', '/v1/operator/allocations/%00/release')), 'request_invalid')
    // DNS rebinding: a page of another site whose name now points at 127.0.0.1 reaches loopback with its own Host.
    const addressed = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const url = new URL(`${gw.metricsUrl}/v1/operator/status.json`)
        request({ host: url.hostname, port: url.port, path: url.pathname, headers: { host } }, (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
          .on('error', reject)
          .end()
      })
    assert.equal(await addressed('evil.example:9464'), 403, 'a rebound name is refused')
    assert.equal(await addressed('127.0.0.1.evil.example'), 403)
    assert.equal(await addressed(`localhost:${new URL(gw.metricsUrl).port}`), 200)
    assert.equal(await addressed(new URL(gw.metricsUrl).host), 200)
    const listed = await api('GET', '/v1/operator/allocations?node=cap-1')
    assert.equal((listed.body.allocations as unknown[]).length, 2)
    const released = await api(
      'POST',
      `/v1/operator/allocations/${(apiOk.body.allocation as { id: string }).id}/release`,
    )
    assert.equal(released.status, 200)
    assert.equal(
      code(await api('POST', `/v1/operator/allocations/${(apiOk.body.allocation as { id: string }).id}/release`)),
      'allocation_unknown',
    )
    const list = await cli(['alloc', 'list', '--node', 'cap-1'])
    assertMatchesOutputSchema('alloc-list', list.json)
    assert.equal(list.json.result.allocations.length, 1)
  })

  it('the operator API on the mTLS listener serves an operator certificate from `fleetkit ca operator-cert`, and refuses an agent certificate', async () => {
    const agent = await enrolled('op-1')
    const out = join(stateDir, 'op')
    const issued = await runFleetkit(['ca', 'operator-cert', 'alice', '--out', out, '--pki-dir', gw.pkiDir, '--json'], {
      env: { DATABASE_URL: gw.db.url, FLEETKIT_STATE_DIR: stateDir },
    })
    assert.equal(issued.code, 0, issued.stdout + issued.stderr)
    assertMatchesOutputSchema('ca-operator-cert', issued.json)
    assert.doesNotMatch(issued.stdout, /PRIVATE KEY/)
    const tls = {
      ca: gw.caPem,
      key: await readFile(join(out, 'alice.key'), 'utf8'),
      cert: await readFile(join(out, 'alice.pem'), 'utf8'),
    }
    const listed = await httpsJson(gw.agentUrl, 'GET', '/v1/operator/allocations', undefined, tls)
    assert.equal(listed.status, 200, JSON.stringify(listed.body))
    const asAgent = await httpsJson(gw.agentUrl, 'GET', '/v1/operator/allocations', undefined, {
      ca: gw.caPem,
      key: agent.keyPem,
      cert: agent.certificatePem,
    })
    assert.equal(asAgent.status, 403)
    assert.equal(code(asAgent), 'operator_refused')
    assert.equal(
      (await httpsJson(gw.agentUrl, 'POST', '/v1/agent/heartbeat', {}, tls)).status,
      401,
      'an operator certificate is no agent identity',
    )

    // Revoked: the next request is refused; the list and the event say so; a second revoke changes nothing.
    const env = { DATABASE_URL: gw.db.url, FLEETKIT_STATE_DIR: stateDir }
    const revoked = await runFleetkit(['ca', 'operator-revoke', 'alice', '--json'], { env })
    assert.equal(revoked.code, 0, revoked.stdout + revoked.stderr)
    assertMatchesOutputSchema('ca-operator-revoke', revoked.json)
    assert.deepEqual(
      revoked.json.result.revoked.map((c: { serial: string; status: string }) => [c.serial, c.status]),
      [[issued.json.result.serial, 'revoked']],
    )
    const refused = await httpsJson(gw.agentUrl, 'GET', '/v1/operator/allocations', undefined, tls)
    assert.equal(refused.status, 403, JSON.stringify(refused.body))
    assert.equal(code(refused), 'operator_refused')
    const listedCerts = await runFleetkit(['ca', 'operator-list', '--name', 'alice', '--json'], { env })
    assertMatchesOutputSchema('ca-operator-list', listedCerts.json)
    assert.equal(listedCerts.json.result.certificates[0].status, 'revoked')
    const events = await runFleetkit(['events', '--type', 'operator_certificate_revoked', '--json'], { env })
    assert.equal(events.json.result.events.length, 1, events.stdout)
    const again = await runFleetkit(['ca', 'operator-revoke', 'alice', '--json'], { env })
    assert.equal(again.json.code, 'OPERATOR_CERT_UNKNOWN', again.stdout)
    assertMatchesOutputSchema('ca-operator-revoke', again.json)
    const hostile = await runFleetkit(['ca', 'operator-revoke', "alice'; DROP TABLE nodes; --", '--json'], { env })
    assert.equal(hostile.json.code, 'USAGE_INVALID', hostile.stdout)
  })

  it('node list and node show against a fleet with nodes in each state, --json by schema; events --json too', async () => {
    for (const status of ['provisioning', 'unhealthy', 'lost', 'failed', 'parked'] as const)
      await upsertDeclaredNode(gw.db.pool, { id: `st-${status}`, pool: 'web', region: 'fsn1', status })
    const list = await cli(['node', 'list'])
    assert.equal(list.code, 0, list.stderr)
    assertMatchesOutputSchema('node-list', list.json)
    const statuses = new Set(list.json.result.nodes.map((n: { status: string }) => n.status))
    for (const s of ['provisioning', 'active', 'unhealthy', 'draining', 'retired', 'lost', 'parked', 'failed'])
      assert.ok(statuses.has(s), `a ${s} node is listed`)
    const capped = list.json.result.nodes.find((n: { id: string }) => n.id === 'cap-1')
    assert.deepEqual(capped.reserved, { cpu: 1.5, memoryMib: 2048, diskGib: 10, allocations: 1 })
    const lost = await cli(['node', 'list', '--status', 'lost', '--pool', 'web'])
    assert.deepEqual(
      lost.json.result.nodes.map((n: { id: string }) => n.id),
      ['st-lost'],
    )
    const human = await runFleetkit(['node', 'list', '--schedulable'], {
      env: { DATABASE_URL: gw.db.url, FLEETKIT_STATE_DIR: stateDir },
    })
    assert.match(human.stdout, /^NODE +POOL/m)
    assert.match(human.stdout, /cap-1 .* 1\.5\/2 +2048\/4096 +10\/40/)
    // Drift as its agent reported it (issue 39): a column in the list, a line in show, by schema in --json.
    assert.deepEqual(capped.drift, { state: 'unknown', parts: [], reason: 'not_reported', since: null })
    await recordDriftVerdict(
      gw.db.pool,
      'cap-1',
      {
        state: 'drifted',
        parts: ['nft', 'unit'],
        reason: null,
        digest: null,
        fingerprintRunId: null,
        hostCheckedAt: null,
      },
      new Date(),
    )
    const drifted = await runFleetkit(['node', 'list'], {
      env: { DATABASE_URL: gw.db.url, FLEETKIT_STATE_DIR: stateDir },
    })
    assert.match(drifted.stdout, /^NODE .* DRIFT +CPU/m)
    assert.match(drifted.stdout, /cap-1 .* drifted:nft,unit +1\.5\/2/)
    const shown = await runFleetkit(['node', 'show', 'cap-1'], {
      env: { DATABASE_URL: gw.db.url, FLEETKIT_STATE_DIR: stateDir },
    })
    assert.match(shown.stdout, /^ {2}drift {7}DRIFTED: nft, unit differ from its last sync's fingerprint since /m)
    const shownJson = await cli(['node', 'show', 'cap-1'])
    assertMatchesOutputSchema('node-show', shownJson.json)
    assert.deepEqual(shownJson.json.result.node.drift.parts, ['nft', 'unit'])
    // An admitted node that turns unhealthy keeps its admission but is not schedulable meanwhile.
    await setNodeStatus(gw.db.pool, 'cap-1', 'unhealthy')
    const sick = (await cli(['node', 'list'])).json.result.nodes.find((n: { id: string }) => n.id === 'cap-1')
    assert.deepEqual([sick.status, sick.schedulable, sick.admitted], ['unhealthy', false, true])
    const schedulable = await cli(['node', 'list', '--schedulable'])
    assert.ok(!schedulable.json.result.nodes.some((n: { id: string }) => n.id === 'cap-1'))
    await setNodeStatus(gw.db.pool, 'cap-1', 'active')
    const back = (await cli(['node', 'list', '--schedulable'])).json.result.nodes.find(
      (n: { id: string }) => n.id === 'cap-1',
    )
    assert.deepEqual([back.status, back.schedulable, back.admitted], ['active', true, true])
    const show = await cli(['node', 'show', 'dec-1'])
    assertMatchesOutputSchema('node-show', show.json)
    assert.ok(show.json.result.certificates.every((c: { revoked: boolean }) => c.revoked))
    assert.ok(show.json.result.events.some((e: { kind: string }) => e.kind === 'node_retired'))
    const missing = await cli(['node', 'show', 'nobody'])
    assert.equal(missing.json.code, 'NODE_UNKNOWN')
    assertMatchesOutputSchema('node-show', missing.json)
    const events = await cli(['events', '--node', 'dec-1', '--since', '1h'])
    assertMatchesOutputSchema('events', events.json)
    assert.deepEqual(
      events.json.result.events
        .map((e: { kind: string }) => e.kind)
        .filter((k: string) => k !== 'certificates_revoked'),
      ['node_enrolled', 'node_admitted', 'allocation_reserved', 'node_draining', 'allocation_released', 'node_retired'],
    )
    const refused = await gw.enrollPost({ node_id: 'ghost-1', enrollment_secret: 'x'.repeat(64), csr_pem: 'nope' })
    assert.equal(refused.status, 400)
    const kinds = await cli(['events', '--type', 'enrollment_refused'])
    assert.deepEqual(
      kinds.json.result.events.map((e: { nodeId: string }) => e.nodeId),
      ['ghost-1'],
    )
  })

  it('drain, undrain, admit again (CLI, --json by schema): the way back leases again before it schedules, with an event each', async () => {
    const agent = await enrolled('und-1')
    await recordNodeCapacity(gw.db.pool, 'und-1', CAPACITY)
    assert.equal((await cli(['node', 'admit', 'und-1'])).json.result.schedulable, true)
    assert.equal((await cli(['node', 'drain', 'und-1'])).json.result.to, 'draining')
    assert.equal((await gw.agent(agent, 'POST', '/v1/agent/lease', {})).status, 403)
    const admitDraining = await cli(['node', 'admit', 'und-1'])
    assert.equal(admitDraining.json.code, 'NODE_STATE_CONFLICT')
    assert.match(admitDraining.json.message, /it is draining/)
    assert.ok(admitDraining.json.actions.some((a: string) => a.startsWith('fleetkit node undrain und-1')))
    const back = await cli(['node', 'undrain', 'und-1'])
    assert.equal(back.code, 0, back.stdout + back.stderr)
    assertMatchesOutputSchema('node-undrain', back.json)
    assert.deepEqual(
      {
        action: back.json.result.action,
        from: back.json.result.from,
        to: back.json.result.to,
        changed: back.json.result.changed,
      },
      { action: 'undrain', from: 'draining', to: 'active', changed: true },
    )
    assert.equal(back.json.result.schedulable, false, 'undrain never schedules on its own')
    assert.match(back.json.result.message, /fleetkit node admit und-1/)
    const lease = await gw.agent(agent, 'POST', '/v1/agent/lease', {})
    assert.equal(lease.status, 200, 'an undrained node leases again (its checks can run)')
    const again = await cli(['node', 'undrain', 'und-1'])
    assert.equal(again.code, 0)
    assert.equal(again.json.result.changed, false, 'undrain of an active node changes nothing')
    const admitted = await cli(['node', 'admit', 'und-1'])
    assert.equal(admitted.code, 0, admitted.stdout)
    assert.equal(admitted.json.result.schedulable, true)
    assert.deepEqual(
      (await listEvents(gw.db.pool, { nodeId: 'und-1' }))
        .map((e) => e.kind)
        .filter((k) => ['node_admitted', 'node_draining', 'node_undrained'].includes(k)),
      ['node_admitted', 'node_draining', 'node_undrained', 'node_admitted'],
    )
    const [undrained] = await listEvents(gw.db.pool, { nodeId: 'und-1', kind: 'node_undrained' })
    assert.deepEqual(undrained!.data, { from: 'draining', actor: 'ci' })
  })

  it('a lost node comes back: a check that only timed out is not a failed check; one whose real checks failed is undrained, checked and admitted', async () => {
    /** The sweep's verdict, then a heartbeat since: a lost node that is talking again. */
    const lostAndBack = (id: string) =>
      gw.db.pool.query(
        `UPDATE nodes SET status = 'lost', schedulable = false, lost_at = now() - interval '30 seconds', last_seen_at = now() WHERE id = $1`,
        [id],
      )
    const completeChecks = async (agent: AgentIdentityFiles, id: string, result: unknown) => {
      const job = await createJob(gw.db.pool, { nodeId: id, kind: 'checks', now: new Date() })
      const lease = await gw.agent(agent, 'POST', '/v1/agent/lease', {})
      assert.equal(lease.status, 200, JSON.stringify(lease.body))
      const done = await gw.agent(agent, 'POST', `/v1/agent/jobs/${job.id}/complete`, {
        lease_token: (lease.body.job as { lease_token: string }).lease_token,
        status: 'succeeded',
        result,
      })
      assert.equal(done.status, 200)
    }

    // No agent takes the job (as while no gateway runs): the command times out on its injected clock.
    await enrolled('lost-1')
    await recordNodeCapacity(gw.db.pool, 'lost-1', CAPACITY)
    const clock = fixedClock(new Date('2026-12-07T22:00:00Z'))
    await assert.rejects(
      runNodeCheck({
        pool: gw.db.pool,
        nodeId: 'lost-1',
        timeoutSeconds: 5,
        clock,
        sleep: async () => clock.advance(1000),
      }),
      (error: { code?: string; data?: Record<string, unknown>; actions?: string[] }) =>
        error.code === 'NODE_CHECK_TIMEOUT' &&
        error.data?.withdrawn === true &&
        error.actions!.some((a) => a.includes('the gateway may be down')),
    )
    await lostAndBack('lost-1')
    const back = await admitNode({ pool: gw.db.pool, nodeId: 'lost-1', actor })
    assert.deepEqual(
      { from: back.from, to: back.to, schedulable: back.schedulable },
      {
        from: 'lost',
        to: 'active',
        schedulable: true,
      },
    )

    // Its last real checks failed before it went silent: admit names the way back, and it works.
    const agent = await enrolled('lost-2')
    await recordNodeCapacity(gw.db.pool, 'lost-2', CAPACITY)
    await completeChecks(agent, 'lost-2', {
      checks: [{ id: 'host:br-netfilter', status: 'fail', code: 'BR_NETFILTER_OFF', detail: 'not loaded' }],
    })
    await lostAndBack('lost-2')
    const refused = await cli(['node', 'admit', 'lost-2'])
    assert.equal(refused.json.code, 'NODE_CHECKS_FAILING')
    assert.ok(refused.json.actions[0].startsWith('fleetkit node undrain lost-2'), refused.json.actions.join(' | '))
    const check = await cli(['node', 'check', 'lost-2'])
    assert.equal(check.json.code, 'NODE_STATE_CONFLICT')
    assert.ok(
      check.json.actions.some((a: string) => a.startsWith('fleetkit node undrain lost-2')),
      check.json.actions.join(' | '),
    )
    const undrained = await cli(['node', 'undrain', 'lost-2'])
    assert.equal(undrained.code, 0, undrained.stdout + undrained.stderr)
    assertMatchesOutputSchema('node-undrain', undrained.json)
    assert.deepEqual(
      {
        from: undrained.json.result.from,
        to: undrained.json.result.to,
        schedulable: undrained.json.result.schedulable,
      },
      { from: 'lost', to: 'active', schedulable: false },
    )
    assert.equal((await getNode(gw.db.pool, 'lost-2'))!.lostAt, null, 'its lost mark is cleared')
    await completeChecks(agent, 'lost-2', CHECKS_OK)
    const admitted = await cli(['node', 'admit', 'lost-2'])
    assert.equal(admitted.code, 0, admitted.stdout + admitted.stderr)
    assert.equal(admitted.json.result.schedulable, true)
    const [event] = await listEvents(gw.db.pool, { nodeId: 'lost-2', kind: 'node_undrained' })
    assert.deepEqual(event!.data, { from: 'lost', actor: 'ci' })
  })

  it('undrain refuses where it makes no sense (parked, lost, retired) with NODE_STATE_CONFLICT naming the status; unpark to draining points at undrain', async () => {
    await enrolled('und-2')
    await drainNode({ pool: gw.db.pool, nodeId: 'und-2', actor, clock: systemClock })
    await parkNode({ pool: gw.db.pool, nodeId: 'und-2', actor })
    const parked = await cli(['node', 'undrain', 'und-2'])
    assert.equal(parked.json.code, 'NODE_STATE_CONFLICT')
    assert.match(parked.json.message, /cannot undrain und-2: it is parked/)
    assert.ok(parked.json.actions.includes('fleetkit node unpark und-2'))
    assertMatchesOutputSchema('node-undrain', parked.json)
    const unparked = await unparkNode({ pool: gw.db.pool, nodeId: 'und-2', actor })
    assert.equal(unparked.to, 'draining')
    assert.match(unparked.message, /fleetkit node undrain und-2, then fleetkit node admit und-2/)
    await setNodeStatus(gw.db.pool, 'und-2', 'retired')
    await assert.rejects(undrainNode({ pool: gw.db.pool, nodeId: 'und-2', actor }), {
      code: 'NODE_STATE_CONFLICT',
      message: /it is retired/,
    })
    assert.equal((await listEvents(gw.db.pool, { nodeId: 'und-2', kind: 'node_undrained' })).length, 0)
  })

  it('decommission asks: without a terminal or with --json it needs --yes (CONFIRMATION_REQUIRED, nothing changed)', async () => {
    await gw.declareNode('yes-1')
    await gw.issueSecret('yes-1')
    const human = await runFleetkit(['node', 'decommission', 'yes-1'], {
      env: { DATABASE_URL: gw.db.url, FLEETKIT_STATE_DIR: stateDir },
    })
    assert.equal(human.code, 2, human.stderr)
    assert.match(
      human.stderr,
      /^Error \(CONFIRMATION_REQUIRED\): retire yes-1 \(provisioning\): .*can never be enrolled again; there is no terminal to ask on, so it needs --yes; nothing changed$/m,
    )
    assert.match(human.stderr, /fleetkit node decommission yes-1 --yes/)
    const json = await cli(['node', 'decommission', 'yes-1'])
    assert.equal(json.json.code, 'CONFIRMATION_REQUIRED')
    assertMatchesOutputSchema('node-decommission', json.json)
    assert.equal((await getNode(gw.db.pool, 'yes-1'))!.status, 'provisioning', 'nothing changed')
    const confirmed = await cli(['node', 'decommission', 'yes-1', '--yes'])
    assert.equal(confirmed.json.result.to, 'retired', confirmed.stdout)
    const again = await cli(['node', 'decommission', 'yes-1'])
    assert.equal(again.code, 0, 'a retired node is not asked about again: nothing is lost')
  })

  it('a node id that is not known: NODE_UNKNOWN suggests the nearest ids, on one line', async () => {
    const typo = await runFleetkit(['node', 'drain', 'und-l'], {
      env: { DATABASE_URL: gw.db.url, FLEETKIT_STATE_DIR: stateDir },
    })
    const lines = typo.stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('Error'))
    assert.equal(lines.length, 1)
    assert.match(
      lines[0]!,
      /^Error \(NODE_UNKNOWN\): no node "und-l" in the state database; did you mean "und-1"( or "[^"]+")*\?$/,
    )
    const show = await cli(['node', 'show', 'dec1'])
    assert.deepEqual(show.json.data.suggestions[0], 'dec-1')
    assert.ok(show.json.actions.includes('fleetkit node show dec-1'))
    const none = await cli(['node', 'show', 'zzzzzzzzzzzz'])
    assert.equal(none.json.message, 'no node "zzzzzzzzzzzz" in the state database')
  })

  it('the sweep fails a provisioning node whose enrollment secret expired unused, once, with an event', async () => {
    await gw.declareNode('exp-1')
    await gw.issueSecret('exp-1', { ttlSeconds: 60, now: new Date(Date.now() - 3600_000) })
    await gw.declareNode('exp-2')
    await gw.issueSecret('exp-2')
    const first = await cli(['sweep'])
    assertMatchesOutputSchema('sweep', first.json)
    assert.deepEqual(
      first.json.result.failed.map((f: { nodeId: string }) => f.nodeId),
      ['exp-1'],
    )
    assert.equal((await getNode(gw.db.pool, 'exp-1'))!.status, 'failed')
    assert.equal((await getNode(gw.db.pool, 'exp-2'))!.status, 'provisioning', 'an unexpired secret is still pending')
    const second = await cli(['sweep'])
    assert.deepEqual(second.json.result.failed, [], 'a second sweep finds nothing left to fail')
    const events = await listEvents(gw.db.pool, { nodeId: 'exp-1', kind: 'enrollment_expired' })
    assert.equal(events.length, 1)
    assert.equal(events[0]!.data.from, 'provisioning')
    const check = await cli(['node', 'check', 'exp-1'])
    assert.equal(check.json.code, 'NODE_NOT_ENROLLED')
    assert.match(check.json.message, /status failed/)
    const token = await cli(['node', 'token', 'exp-1', '--reissue'])
    assert.equal(token.code, 0, token.stdout + token.stderr)
    assert.equal(
      (await getNode(gw.db.pool, 'exp-1'))!.status,
      'provisioning',
      'a new secret makes it provisioning again',
    )
  })
})

describe('fleetkit events --follow (library)', function () {
  this.timeout(60_000)
  let pg: DisposablePostgres
  before(async () => {
    pg = await startDisposablePostgres()
  })
  after(async () => {
    await pg?.stop()
  })

  it('delivers each new event once, in order, until aborted', async () => {
    const db = await freshDatabase(pg.url)
    try {
      await appendEvent(db.pool, { kind: 'node_parked', nodeId: 'f-1' })
      const seen: string[] = []
      const abort = new AbortController()
      const following = followEvents(
        db.pool,
        { afterId: 1 },
        (e) => {
          seen.push(`${e.kind}:${e.nodeId}`)
          if (seen.length === 2) abort.abort()
        },
        { clock: systemClock, signal: abort.signal, pollMs: 20 },
      )
      await appendEvent(db.pool, { kind: 'node_unparked', nodeId: 'f-1' })
      await appendEvent(db.pool, { kind: 'node_admitted', nodeId: 'f-1' })
      await following
      assert.deepEqual(seen, ['node_unparked:f-1', 'node_admitted:f-1'])
    } finally {
      await db.drop()
    }
  })
})
