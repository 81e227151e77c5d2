// `node provision`, `node replace` and the provider half of `node decommission` against the Hetzner
// stub (in-process on loopback, one injected clock with the client), one real PostgreSQL database
// and one real gateway for the file: the create request, crash safety and --resume, name conflicts,
// placement fallback, enrollment and its expiry, replace, a delete that fails once, and answers
// without a usable server id (a proxy in front of the stub sends them).
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { parse, stringify } from 'yaml'

import { type FleetkitError, isFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { systemClock } from '../../../src/config/clock.js'
import { seededRng } from '../../../src/config/rng.js'
import { loadHostPolicy } from '../../../src/definition/host-policy.js'
import type { Definition } from '../../../src/definition/types.js'
import { decommissionNode } from '../../../src/lifecycle/node/node-decommission.js'
import { drainNode } from '../../../src/lifecycle/node/node-drain.js'
import { type ProvisionOptions, provisionNode } from '../../../src/lifecycle/provision/node-provision.js'
import { replaceNode } from '../../../src/lifecycle/provision/node-replace.js'
import { seedNode } from '../../../src/lifecycle/seed/seed-node.js'
import { parseVolumeSize } from '../../../src/lifecycle/provision/provision-plan.js'
import { renderInventory } from '../../../src/render/inventory.js'
import { generateSshHostKey } from '../../../src/render/ssh-host-key.js'
import { apiTokenFromEnv } from '../../../src/provider/api-token.js'
import { HetznerClient } from '../../../src/provider/hetzner.js'
import { type HetznerStub, startHetznerStub } from '../../../src/provider/hetzner-stub.js'
import { listEvents } from '../../../src/store/events.js'
import { getProvisionRow } from '../../../src/store/provider/provisioning.js'
import { getNode, listNodes, setNodeHostKey, upsertDeclaredNode } from '../../../src/store/nodes/nodes.js'
import { assertMatchesOutputSchema, fleetkitEntry, runFleetkit } from '../../support/cli.js'
import { eventually } from '../../support/eventually.js'
import { startHetznerProxy } from '../../support/hetzner-proxy.js'
import { overlayEnv, runProcessOk, startProcess } from '../../support/process.js'
import { validDefinition } from '../../support/definition-fixture.js'
import type { TestGateway } from '../../support/gateway.js'
import { type ProvisionWorld, decodeUserData, startProvisionWorld } from '../../support/provision-world.js'

/** The user_data as cloud-init's Hetzner data source reads it: base64, then gzip. */
async function rejectsWith(promise: Promise<unknown>, code: string): Promise<Error> {
  try {
    await promise
  } catch (error) {
    assert.ok(isFleetkitError(error), String(error))
    assert.equal(error.code, code, error.message)
    return error
  }
  assert.fail(`expected ${code}`)
}

describe('node provision, replace and decommission against the Hetzner stub', function () {
  this.timeout(120_000)
  let world: ProvisionWorld
  let gw: TestGateway
  let stub: HetznerStub
  let client: HetznerClient
  let definition: Definition
  let clock: ProvisionWorld['clock']
  let sleep: ProvisionWorld['sleep']
  const creates = (name: string) => world.creates(name)
  const serversOf = (nodeId: string) => world.serversOf(nodeId)
  const serversNamed = (name: string) => [...stub.api.servers.values()].filter((s) => s.name === name)
  async function secretOf(nodeId: string): Promise<string> {
    const secret = await world.secretOf(nodeId)
    assert.ok(secret, 'the seed holds the secret whose hash the state has')
    return secret
  }
  const enrollHook = (nodeId: string) => world.enrollHook(nodeId)

  function declare(...ids: string[]) {
    for (const id of ids) definition.nodes.push({ id, pool: 'build', state: 'active' })
  }
  const provision = (nodeId: string, extra: Partial<ProvisionOptions> = {}) =>
    provisionNode({
      pool: gw.db.pool,
      nodeId,
      definition,
      files: { caBundle: gw.caPem },
      client,
      policy: loadHostPolicy(),
      request: {},
      resume: false,
      waitMs: 0,
      pollMs: 1000,
      clock,
      rng: seededRng(`provision-${nodeId}`),
      sleep,
      ...extra,
    })

  before(async () => {
    world = await startProvisionWorld()
    ;({ gw, stub, client, definition, clock, sleep } = world)
  })
  after(async () => {
    await world?.close()
  })

  it('creates one server with the pool firewall, the three labels and a gzip+base64 seed; only the hash is stored; --resume creates nothing', async () => {
    declare('build-2')
    const steps: string[] = []
    const result = await provision('build-2', { progress: (m) => steps.push(m) })
    assert.equal(result.state, 'awaiting_enrollment')
    assert.equal(creates('build-2').length, 1)
    const body = creates('build-2')[0]!.body as {
      labels: Record<string, string>
      firewalls: { firewall: number }[]
      user_data: string
      location: string
    }
    const firewall = [...stub.api.firewalls.values()].find((f) => f.name === 'fleetkit-build')!
    assert.deepEqual(body.firewalls, [{ firewall: firewall.id }])
    assert.deepEqual(
      firewall.rules.map((r) => [r.direction, r.protocol, r.port, r.source_ips]),
      [['in', 'tcp', '22', ['10.100.0.0/16']]],
    )
    assert.deepEqual(body.labels, {
      'fleetkit.node_id': 'build-2',
      'fleetkit.fleet': 'fixture',
      'fleetkit.pool': 'build',
    })
    assert.equal(body.location, 'fsn1')
    assert.ok(body.user_data.length <= 32_768)
    const secret = await secretOf('build-2')
    assert.ok(!JSON.stringify(stub.requests).includes(secret), 'the secret is in no request in clear')
    const { rows } = await gw.db.pool.query(`SELECT row_to_json(n)::text AS t FROM nodes n WHERE id = 'build-2'`)
    assert.ok(!(rows[0] as { t: string }).t.includes(secret), 'the state holds only the hash')
    const events = await listEvents(gw.db.pool, { nodeId: 'build-2' })
    assert.ok(!JSON.stringify(events).includes(secret))
    assert.ok(!steps.join('\n').includes(secret))
    // cx32 (4 cores, 8 GB, 80 GB) less the reserve (0.5, 1 GiB, 20 GB).
    assert.deepEqual(result.capacity, { cpu: 3.5, memoryMib: 7168, diskGib: 60 })
    assert.equal(result.serverId, serversOf('build-2')[0]!.id)

    const again = await provision('build-2', { resume: true })
    assert.equal(again.serverId, result.serverId)
    assert.equal(creates('build-2').length, 1, 'resume sent no create')
    await rejectsWith(provision('build-2'), 'PROVISION_IN_PROGRESS')
  })

  it('a create that times out after the server exists, and a kill at every step, end with exactly one server after --resume', async () => {
    declare('build-t')
    stub.inject({ method: 'POST', path: '/servers', kind: 'hang', afterEffect: true })
    const adopted = await provision('build-t')
    assert.equal(adopted.adopted, true)
    await provision('build-t', { resume: true })
    assert.equal(serversOf('build-t').length, 1)
    assert.equal(creates('build-t').length, 1)

    const kill = () => {
      throw new Error('killed')
    }
    for (const point of ['pending', 'beforeCreate', 'afterCreate', 'server_requested', 'awaiting_enrollment']) {
      const id = `build-k-${point.toLowerCase().replace('_', '-')}`
      declare(id)
      const killed = Object.create(client) as HetznerClient
      if (point === 'afterCreate')
        killed.createServer = async (request) => {
          await client.createServer(request)
          throw new Error('killed after the create was sent')
        }
      await assert.rejects(
        provision(id, {
          client: killed,
          afterStep: (step) => (step === point ? kill() : undefined),
          beforeCreate: point === 'beforeCreate' ? kill : undefined,
        }),
        /killed/,
      )
      const done = await provision(id, { resume: true })
      assert.equal(done.state, 'awaiting_enrollment', point)
      assert.equal(serversOf(id).length, 1, `one server after a kill at ${point}`)
      assert.ok(creates(id).length <= 1, `never a second create after a kill at ${point}`)
    }
  })

  it('a server with the node name but without its label is PROVIDER_NAME_CONFLICT and never adopted', async () => {
    declare('build-c')
    const res = await fetch(`${stub.url}/servers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stub.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'build-c', server_type: 'cx22', image: 'ubuntu-24.04', location: 'fsn1' }),
    })
    assert.equal(res.status, 201)
    const error = await rejectsWith(provision('build-c'), 'PROVIDER_NAME_CONFLICT')
    assert.match(error.message, /never adopted/)
    assert.equal(creates('build-c').length, 1, 'only the foreign create')
    assert.deepEqual(serversNamed('build-c')[0]!.labels, {})
    assert.equal((await getProvisionRow(gw.db.pool, 'build-c'))!.providerServerId, null)
  })

  it('resource_unavailable in the first region moves to the second, recorded as an event', async () => {
    declare('build-p')
    stub.api.unavailable.add('cx32@fsn1')
    try {
      const result = await provision('build-p')
      assert.equal(result.region, 'nbg1')
      assert.deepEqual(result.placementMoves, [
        { from: { region: 'fsn1', type: 'cx32' }, to: { region: 'nbg1', type: 'cx32' } },
      ])
      const moves = await listEvents(gw.db.pool, { nodeId: 'build-p', kind: 'provision_placement_moved' })
      assert.equal(moves.length, 1)
      assert.deepEqual(
        creates('build-p').map((r) => (r.body as { location: string }).location),
        ['fsn1', 'nbg1'],
      )
    } finally {
      stub.api.unavailable.delete('cx32@fsn1')
    }
  })

  describe('the SSH host key of a node that declares ssh.user: the rule of fleetkit seed', () => {
    const OLD = generateSshHostKey('old', seededRng('old-host-key')).publicKey
    const declareSsh = (id: string, hostKey?: string) =>
      definition.nodes.push({
        id,
        pool: 'build',
        state: 'active',
        ssh: { host: '10.20.0.5', user: 'ops' },
        ...(hostKey ? { hostKey } : {}),
      })
    const eventsOf = async (nodeId: string) => (await listEvents(gw.db.pool, { nodeId })).map((e) => e.kind)
    /** The seed's public host key, from the create request's user_data. */
    const seededKey = (nodeId: string) =>
      /ed25519_public: (ssh-ed25519 \S+)/.exec(
        decodeUserData((creates(nodeId).at(-1)!.body as { user_data: string }).user_data),
      )?.[1]
    /** `ssh-keygen -lf` of a public key: the fingerprint an operator compares. */
    const keygenFingerprint = async (publicKey: string) =>
      (await runProcessOk('ssh-keygen', ['-lf', '-'], { input: `${publicKey}\n` })).stdout.split(' ')[1]

    it('a fresh node: the seed key is pinned, a host_key_pinned event, its fingerprint in the result', async () => {
      declareSsh('app-k1')
      const result = await provision('app-k1', { actor: 'ops@test' })
      const stored = (await getNode(gw.db.pool, 'app-k1'))!.hostKeyPublic!
      assert.equal(stored.split(' ').slice(0, 2).join(' '), seededKey('app-k1'))
      assert.deepEqual(result.hostKey, { publicKey: stored, fingerprint: await keygenFingerprint(stored) })
      assert.match(result.hostKey!.fingerprint, /^SHA256:[A-Za-z0-9+/]{43}$/)
      const pinned = await listEvents(gw.db.pool, { nodeId: 'app-k1', kind: 'host_key_pinned' })
      assert.equal(pinned.length, 1)
      assert.deepEqual(pinned[0]!.data, { actor: 'ops@test', host_key: stored, via: 'node provision' })
      assert.ok(!(await eventsOf('app-k1')).includes('host_key_replaced'))
    })

    it('a key pinned in the state is HOST_KEY_PINNED before any request, nothing changed; --rekey replaces it, one event', async () => {
      declareSsh('app-k2')
      await upsertDeclaredNode(gw.db.pool, { id: 'app-k2', pool: 'build', status: 'parked' })
      await setNodeHostKey(gw.db.pool, 'app-k2', OLD)
      const requests = stub.requests.length
      const events = await eventsOf('app-k2')
      const error = await rejectsWith(provision('app-k2'), 'HOST_KEY_PINNED')
      assert.match(error.message, /nothing was created or stored/)
      assert.match((error as FleetkitError).actions.join('\n'), /fleetkit node provision app-k2 --rekey/)
      assert.equal(stub.requests.length, requests, 'no provider request, so no POST /servers')
      const row = (await getProvisionRow(gw.db.pool, 'app-k2'))!
      assert.equal(row.hostKeyPublic, OLD)
      assert.equal(row.provisionState, null)
      assert.equal(row.status, 'parked')
      assert.deepEqual(await eventsOf('app-k2'), events)

      const result = await provision('app-k2', { rekey: true, actor: 'ops@test' })
      assert.equal(result.state, 'awaiting_enrollment')
      assert.equal(creates('app-k2').length, 1)
      const stored = (await getNode(gw.db.pool, 'app-k2'))!.hostKeyPublic!
      assert.notEqual(stored, OLD)
      assert.equal(stored.split(' ').slice(0, 2).join(' '), seededKey('app-k2'))
      assert.equal(result.hostKey?.fingerprint, await keygenFingerprint(stored))
      const replaced = await listEvents(gw.db.pool, { nodeId: 'app-k2', kind: 'host_key_replaced' })
      assert.equal(replaced.length, 1)
      assert.deepEqual(replaced[0]!.data, { actor: 'ops@test', previous_host_key: OLD, host_key: stored })
      assert.ok(!(await eventsOf('app-k2')).includes('host_key_pinned'))
    })

    it("a hostKey in the node's definition is refused the same way: no request, no row", async () => {
      declareSsh('app-k3', OLD)
      const requests = stub.requests.length
      const error = await rejectsWith(provision('app-k3'), 'HOST_KEY_PINNED')
      assert.match(error.message, /app-k3 has a pinned SSH host key/)
      assert.equal(stub.requests.length, requests)
      assert.equal(await getProvisionRow(gw.db.pool, 'app-k3'), undefined)
      assert.deepEqual(await eventsOf('app-k3'), [])
    })
  })

  describe('a seed of the node while it is provisioned: `fleetkit seed` takes no run lock', () => {
    let dir: string
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'fleetkit-provision-seed-'))
    })
    after(async () => {
      await rm(dir, { recursive: true, force: true })
    })
    const declareSsh = (id: string) =>
      definition.nodes.push({ id, pool: 'build', state: 'active', ssh: { host: '10.20.0.7', user: 'ops' } })
    /** `fleetkit seed NODE --kind agent`, as the command runs it: a secret issued, a host key pinned for ssh.user. */
    const seedAgent = (nodeId: string) =>
      seedNode({
        pool: gw.db.pool,
        nodeId,
        kind: 'agent',
        definition,
        ttlMs: 15 * 60_000,
        autoinstall: false,
        output: join(dir, `${nodeId}.user-data`),
        git: async () => undefined,
        env: {},
        actor: 'seeder@test',
        clock,
        rng: seededRng(`seed-${nodeId}`),
        files: { caBundle: gw.caPem },
      })
    /** The whole row and the node's events: what "nothing changed" compares. */
    const snapshot = async (nodeId: string) => ({
      row: (
        await gw.db.pool.query<{ t: string }>(`SELECT row_to_json(n)::text AS t FROM nodes n WHERE id = $1`, [nodeId])
      ).rows[0]?.t,
      events: (await listEvents(gw.db.pool, { nodeId })).map((e) => [e.kind, e.data]),
    })
    /** The seed file's secret is the one whose hash the state holds: the seed still enrolls. */
    async function assertSeedStillValid(nodeId: string): Promise<void> {
      const document = await readFile(join(dir, `${nodeId}.user-data`), 'utf8')
      const { rows } = await gw.db.pool.query<{ h: string }>(
        `SELECT encode(enrollment_secret_sha256, 'hex') AS h FROM nodes WHERE id = $1`,
        [nodeId],
      )
      const hashes = (document.match(/[0-9a-f]{64}/g) ?? []).map((s) => createHash('sha256').update(s).digest('hex'))
      assert.ok(rows[0]?.h && hashes.includes(rows[0].h), "the stored hash is the seed's secret's")
    }

    it('a seed committed while the plan is validated: provision is refused under the lock (NODE_STATE_CONFLICT) and writes nothing', async () => {
      declareSsh('app-s1')
      let seeded: Awaited<ReturnType<typeof snapshot>> | undefined
      // The window: the provider validation requests, after the run read the node and before it starts.
      const racing = Object.create(client) as HetznerClient
      racing.listLocations = async () => {
        if (!seeded) {
          await seedAgent('app-s1')
          seeded = await snapshot('app-s1')
        }
        return client.listLocations()
      }
      const error = await rejectsWith(provision('app-s1', { client: racing }), 'NODE_STATE_CONFLICT')
      assert.match(error.message, /cannot provision app-s1: it is provisioning \(provision applies to parked, failed\)/)
      assert.ok(seeded, 'the seed ran in the window')
      assert.deepEqual(await snapshot('app-s1'), seeded, 'no provision_state, plan or provision_started event')
      assert.equal(creates('app-s1').length, 0)
      await assertSeedStillValid('app-s1')
      await rejectsWith(provision('app-s1', { resume: true }), 'PROVISION_NOT_STARTED')
      assert.deepEqual(await snapshot('app-s1'), seeded)
    })

    /**
     * A seed committed while the run is under way. `fleetkit seed` refuses that now (PROVISION_IN_PROGRESS); one of
     * an older fleetkit did not look, so the run must still refuse to replace what it stored: that seed is made by
     * hiding the run's step from it for the moment it runs.
     */
    async function olderSeed(nodeId: string): Promise<void> {
      await rejectsWith(seedAgent(nodeId), 'PROVISION_IN_PROGRESS')
      const { rows } = await gw.db.pool.query<{ s: string }>('SELECT provision_state AS s FROM nodes WHERE id = $1', [
        nodeId,
      ])
      await gw.db.pool.query('UPDATE nodes SET provision_state = NULL WHERE id = $1', [nodeId])
      try {
        await seedAgent(nodeId)
      } finally {
        await gw.db.pool.query('UPDATE nodes SET provision_state = $2 WHERE id = $1', [nodeId, rows[0]!.s])
      }
    }

    it("a seed committed after the run started: its create intent and every --resume refuse to replace the seed's key (HOST_KEY_PINNED) or secret (NODE_SECRET_PENDING)", async () => {
      // ssh.user: the seed pinned a host key and issued a secret; the key is refused first.
      declareSsh('app-s2')
      let seeded: Awaited<ReturnType<typeof snapshot>> | undefined
      const seedAfterPending = async (step: string) => {
        if (step !== 'pending') return
        await olderSeed('app-s2')
        seeded = await snapshot('app-s2')
      }
      const error = await rejectsWith(provision('app-s2', { afterStep: seedAfterPending }), 'HOST_KEY_PINNED')
      assert.match(error.message, /did not start with or pin .*nothing was created or stored/)
      assert.ok(seeded, 'the seed ran in the window')
      assert.deepEqual(await snapshot('app-s2'), seeded)
      await rejectsWith(provision('app-s2', { resume: true }), 'HOST_KEY_PINNED')
      assert.deepEqual(await snapshot('app-s2'), seeded, 'no host_key_replaced, the secret kept')
      assert.equal(creates('app-s2').length, 0)
      await assertSeedStillValid('app-s2')

      // No ssh.user: only a secret; refused until it expired unused, then the run goes on.
      declare('build-s3')
      let seededSecret: Awaited<ReturnType<typeof snapshot>> | undefined
      const refused = await rejectsWith(
        provision('build-s3', {
          afterStep: async (step) => {
            if (step !== 'pending') return
            await olderSeed('build-s3')
            seededSecret = await snapshot('build-s3')
          },
        }),
        'NODE_SECRET_PENDING',
      )
      assert.match(refused.message, /did not issue/)
      assert.match((refused as FleetkitError).actions.join('\n'), /fleetkit node provision --resume build-s3/)
      await rejectsWith(provision('build-s3', { resume: true }), 'NODE_SECRET_PENDING')
      assert.deepEqual(await snapshot('build-s3'), seededSecret)
      assert.equal(creates('build-s3').length, 0)
      await assertSeedStillValid('build-s3')
      await sleep(16 * 60_000)
      const done = await provision('build-s3', { resume: true })
      assert.equal(done.state, 'awaiting_enrollment')
      assert.equal(creates('build-s3').length, 1)
    })

    it('a run killed after its create intent: --resume replaces its own secret and key, nothing else', async () => {
      declareSsh('app-s4')
      await assert.rejects(
        provision('app-s4', {
          beforeCreate: () => {
            throw new Error('killed')
          },
        }),
        /killed/,
      )
      const done = await provision('app-s4', { resume: true })
      assert.equal(done.state, 'awaiting_enrollment')
      assert.equal(creates('app-s4').length, 1)
      assert.ok(await secretOf('app-s4'))
      const stored = (await getNode(gw.db.pool, 'app-s4'))!.hostKeyPublic!
      const seeded = decodeUserData((creates('app-s4')[0]!.body as { user_data: string }).user_data)
      assert.ok(seeded.includes(stored.split(' ').slice(0, 2).join(' ')), "the stored key is the server seed's")
    })
  })

  it('a 5xx on create is sent once (never retried); a 5xx on a GET is retried', async () => {
    declare('build-5')
    stub.inject({ method: 'POST', path: '/servers', kind: 'status', status: 503 })
    await rejectsWith(provision('build-5'), 'PROVIDER_UNAVAILABLE')
    assert.equal(creates('build-5').length, 1)
    assert.equal(serversOf('build-5').length, 0)
    const before = stub.requests.length
    stub.inject({ method: 'GET', path: '/servers', kind: 'status', status: 503 })
    await provision('build-5', { resume: true })
    const gets = stub.requests.slice(before).filter((r) => r.method === 'GET' && r.path === '/servers')
    assert.equal(gets[0]!.status, 503)
    assert.deepEqual(gets[1]!.query, gets[0]!.query, 'the same GET again')
    assert.equal(serversOf('build-5').length, 1)
    assert.equal(creates('build-5').length, 2, 'the resumed run created once more: the first never took effect')
  })

  it('a create answer without a server id is recovered by its label, never a stuck row; so is a recorded id that is not one', async () => {
    const proxy = await startHetznerProxy(stub.url)
    try {
      const proxied = new HetznerClient({
        env: { HETZNER_API_TOKEN: stub.token },
        baseUrl: proxy.url,
        clock,
        sleep,
        rng: seededRng('proxied'),
        requestTimeoutMs: 500,
      })
      declare('build-i')
      proxy.rewrite({
        method: 'POST',
        path: '/servers',
        body: (b) => ({ ...b, server: { ...(b.server as object), id: undefined } }),
      })
      const result = await provision('build-i', { client: proxied })
      assert.equal(result.adopted, true)
      assert.equal(serversOf('build-i').length, 1)
      assert.equal(creates('build-i').length, 1, 'never sent again')
      const server = serversOf('build-i')[0]!
      assert.equal(result.serverId, server.id)
      const row = (await getProvisionRow(gw.db.pool, 'build-i'))!
      assert.equal(row.providerServerId, String(server.id))
      assert.equal(row.provisionState, 'awaiting_enrollment')
      const adoptions = await listEvents(gw.db.pool, { nodeId: 'build-i', kind: 'provision_server_adopted' })
      assert.equal(adoptions.length, 1)

      // A row the old client left at server_requested with 'undefined' for an id: --resume finds the server.
      declare('build-r')
      await assert.rejects(
        provision('build-r', {
          afterStep: (step) => {
            if (step === 'server_requested') throw new Error('killed')
          },
        }),
        /killed/,
      )
      await gw.db.pool.query(`UPDATE nodes SET provider_server_id = 'undefined' WHERE id = 'build-r'`)
      const before = stub.requests.length
      const resumed = await provision('build-r', { resume: true })
      assert.equal(resumed.state, 'awaiting_enrollment')
      assert.equal(resumed.serverId, serversOf('build-r')[0]!.id)
      assert.equal(creates('build-r').length, 1)
      assert.ok(
        stub.requests.slice(before).every((r) => !/NaN|undefined/.test(r.path)),
        'never /servers/NaN',
      )
    } finally {
      await proxy.close()
    }
  })

  it('a server address that is not an IP is PROVIDER_RESPONSE_INVALID, never INTERNAL_ERROR; --resume ends once answers read', async () => {
    const proxy = await startHetznerProxy(stub.url)
    try {
      const proxied = new HetznerClient({
        env: { HETZNER_API_TOKEN: stub.token },
        baseUrl: proxy.url,
        clock,
        sleep,
        rng: seededRng('proxied-address'),
        requestTimeoutMs: 500,
      })
      declare('build-a')
      // What a broken or hostile endpoint sent: an address with a line of inventory and an escape after it.
      const broken = (server: Record<string, unknown>) => {
        const net = server.public_net as { ipv4: Record<string, unknown> }
        const ip = `${net.ipv4.ip as string}\n  ansible_ssh_common_args: -oProxyCommand=touch /tmp/PWNED\u001b[2J`
        return { ...server, public_net: { ...net, ipv4: { ...net.ipv4, ip } } }
      }
      proxy.rewrite({ method: 'POST', path: '/servers', body: (b) => ({ ...b, server: broken(b.server as never) }) })
      proxy.rewrite({
        method: 'GET',
        path: /^\/servers(?:\/[0-9]+)?$/,
        times: 1000,
        body: (b) =>
          b.server
            ? { ...b, server: broken(b.server as never) }
            : { ...b, servers: (b.servers as never[]).map(broken) },
      })
      const error = await rejectsWith(provision('build-a', { client: proxied }), 'PROVIDER_RESPONSE_INVALID')
      assert.match(error.message, /public_net\.ipv4\.ip .*not an IPv4 address/)
      await rejectsWith(provision('build-a', { client: proxied, resume: true }), 'PROVIDER_RESPONSE_INVALID')
      // The create's answer did not read: the step stays pending, and its --resume looks for the server by label.
      assert.equal((await getProvisionRow(gw.db.pool, 'build-a'))!.provisionState, 'pending')
      // Answers that read again: --resume adopts the one server by its label and records its address.
      const resumed = await provision('build-a', { resume: true })
      assert.equal(resumed.state, 'awaiting_enrollment')
      assert.equal(creates('build-a').length, 1)
      assert.equal((await getNode(gw.db.pool, 'build-a'))?.publicIpv4, serversOf('build-a')[0]!.public_net.ipv4!.ip)
    } finally {
      await proxy.close()
    }
  })

  it('decommission of a node whose recorded server id is not one finds its server by label and deletes it exactly once', async () => {
    declare('build-u')
    await provision('build-u')
    const server = serversOf('build-u')[0]!
    // What a create answer without an id left in the state before answers were read.
    await gw.db.pool.query(`UPDATE nodes SET provider_server_id = 'undefined' WHERE id = 'build-u'`)
    const before = stub.requests.length
    const decommission = () =>
      decommissionNode({ pool: gw.db.pool, nodeId: 'build-u', actor: 'test', clock, provider: () => client })
    const done = await decommission()
    assert.deepEqual(done.deletedServers, [server.id])
    assert.equal(stub.api.servers.has(server.id), false, 'the labelled server is gone')
    const deletes = stub.requests.slice(before).filter((r) => r.method === 'DELETE')
    assert.deepEqual(
      deletes.map((r) => [r.path, r.status]),
      [[`/servers/${server.id}`, 200]],
      'one DELETE, for its real id',
    )
    const [deleted] = await listEvents(gw.db.pool, { nodeId: 'build-u', kind: 'provider_server_deleted' })
    assert.deepEqual(deleted!.data.server_ids, [server.id])
    assert.equal(deleted!.data.found_by, 'label')
    const again = await decommission()
    assert.equal(again.deletedServers, undefined, 'nothing owed any more')
    assert.equal(stub.requests.slice(before).filter((r) => r.method === 'DELETE').length, 1)
  })

  it('waits for the enrollment with the real gateway: enrolled; an expired secret fails the node (ENROLLMENT_EXPIRED)', async () => {
    declare('build-e', 'build-x')
    const enrolled = await provision('build-e', { waitMs: 600_000, afterStep: enrollHook('build-e') })
    assert.equal(enrolled.state, 'enrolled')
    assert.equal((await getProvisionRow(gw.db.pool, 'build-e'))!.status, 'active')

    await rejectsWith(provision('build-x', { waitMs: 3_600_000, pollMs: 30_000 }), 'ENROLLMENT_EXPIRED')
    const failed = (await getProvisionRow(gw.db.pool, 'build-x'))!
    assert.equal(failed.status, 'failed')
    assert.equal(failed.provisionState, 'failed')
    // Without a token a node with a server to delete is refused before anything changes.
    await rejectsWith(
      decommissionNode({
        pool: gw.db.pool,
        nodeId: 'build-x',
        actor: 'test',
        clock,
        provider: () => apiTokenFromEnv({}) as never,
      }),
      'PROVIDER_TOKEN_MISSING',
    )
    assert.equal((await getProvisionRow(gw.db.pool, 'build-x'))!.status, 'failed')
  })

  it('replace provisions a like-for-like node, waits for it, drains the old; decommission deletes the old server exactly once, retrying a failed delete', async () => {
    await gw.enroll('build-2', await secretOf('build-2'))
    const oldServer = serversOf('build-2')[0]!.id
    const replaced = await replaceNode({
      pool: gw.db.pool,
      oldId: 'build-2',
      actor: 'test',
      definition,
      files: { caBundle: gw.caPem },
      client,
      policy: loadHostPolicy(),
      waitMs: 600_000,
      pollMs: 1000,
      clock,
      rng: seededRng('replace'),
      sleep,
      afterStep: enrollHook('build-2-r2'),
    })
    assert.equal(replaced.replacement.node, 'build-2-r2')
    assert.equal(replaced.replacement.state, 'enrolled')
    assert.equal(replaced.replacement.serverType, 'cx32')
    assert.equal(replaced.replacement.region, 'fsn1')
    assert.equal(replaced.drain.to, 'draining')
    assert.equal((await getProvisionRow(gw.db.pool, 'build-2-r2'))!.replacesNodeId, 'build-2')
    await gw.declareNode('hand-1')
    await rejectsWith(
      replaceNode({
        pool: gw.db.pool,
        oldId: 'hand-1',
        actor: 'test',
        definition,
        files: { caBundle: gw.caPem },
        client,
        policy: loadHostPolicy(),
        waitMs: 1000,
        clock,
        rng: seededRng('replace'),
        sleep,
      }),
      'NODE_NOT_PROVIDER_MANAGED',
    )

    const decommission = () =>
      decommissionNode({ pool: gw.db.pool, nodeId: 'build-2', actor: 'test', clock, provider: () => client })
    // Every attempt the client makes at the DELETE fails this time (it retries idempotent calls 4 times).
    stub.inject({ method: 'DELETE', path: `/servers/${oldServer}`, kind: 'status', status: 503, times: 4 })
    await rejectsWith(decommission(), 'PROVIDER_DELETE_FAILED')
    const pending = (await getProvisionRow(gw.db.pool, 'build-2'))!
    assert.equal(pending.status, 'retired')
    assert.equal(pending.deletePending, true)
    assert.equal(stub.api.servers.has(oldServer), true)
    const done = await decommission()
    assert.deepEqual(done.deletedServers, [oldServer])
    assert.equal(stub.api.servers.has(oldServer), false)
    const deletes = stub.requests.filter((r) => r.method === 'DELETE' && r.path === `/servers/${oldServer}`)
    assert.equal(deletes.filter((r) => r.status === 200).length, 1, 'deleted exactly once')
    const third = await decommission()
    assert.equal(third.deletedServers, undefined, 'nothing owed any more')
    assert.equal((await getProvisionRow(gw.db.pool, 'build-2'))!.deletePending, false)
  })

  const volumeCreates = (name: string) =>
    stub.requests.filter(
      (r) => r.method === 'POST' && r.path === '/volumes' && (r.body as { name?: string })?.name === name,
    )
  const volumesOf = (nodeId: string) =>
    [...stub.api.volumes.values()].filter((v) => v.labels['fleetkit.node_id'] === nodeId)

  it("--volume: one labelled volume in the server's location, attached, its device handed to data_volume; a bad size writes nothing", async () => {
    declare('build-v')
    const result = await provision('build-v', { request: { volumeSizeGb: 20 } })
    assert.equal(result.state, 'awaiting_enrollment')
    const server = serversOf('build-v')[0]!
    assert.equal(volumeCreates('build-v').length, 1)
    const body = volumeCreates('build-v')[0]!.body as { size: number; location: string; labels: Record<string, string> }
    assert.equal(body.size, 20)
    assert.equal(body.location, server.datacenter.location.name, "the server's location")
    assert.deepEqual(body.labels, {
      'fleetkit.node_id': 'build-v',
      'fleetkit.fleet': 'fixture',
      'fleetkit.pool': 'build',
    })
    const [volume] = volumesOf('build-v')
    assert.equal(volumesOf('build-v').length, 1)
    assert.equal(volume!.server, server.id, "attached to the node's server")
    assert.equal(result.volume?.state, 'attached')
    assert.equal(result.volume?.id, volume!.id)
    assert.equal(result.volume?.linuxDevice, volume!.linux_device)
    const kinds = (await listEvents(gw.db.pool, { nodeId: 'build-v' })).map((e) => e.kind)
    assert.ok(kinds.includes('provision_volume_created') && kinds.includes('provision_volume_attached'), String(kinds))
    const rendered = renderInventory({
      definition,
      stateNodes: await listNodes(gw.db.pool),
      hostPolicy: loadHostPolicy(),
      knownHostsPath: '/tmp/known_hosts',
    })
    const hostVars = (parse(rendered.yaml) as { all: { hosts: Record<string, Record<string, unknown>> } }).all.hosts
    assert.deepEqual(hostVars['build-v']!.fleetkit_data_volume, {
      filesystem: 'xfs',
      mountPoint: '/srv/fleetkit',
      device: volume!.linux_device,
    })
    assert.equal(hostVars['build-2']?.fleetkit_data_volume ?? null, null, 'a node without a volume gets none')

    declare('build-vbad')
    const before = stub.requests.length
    for (const size of ['9', '10241', '1.5', 'lots', '-20'])
      await rejectsWith(
        Promise.resolve().then(() => parseVolumeSize(size)),
        'VOLUME_SIZE_INVALID',
      )
    assert.equal(parseVolumeSize('50G'), 50)
    assert.equal(stub.requests.length, before, 'nothing sent')
    assert.equal(await getProvisionRow(gw.db.pool, 'build-vbad'), undefined, 'nothing written')
  })

  it('--volume crash safety: a create that times out after the volume exists, and a kill after it, end with one volume after --resume', async () => {
    declare('build-vt')
    stub.inject({ method: 'POST', path: '/volumes', kind: 'hang', afterEffect: true })
    const adopted = await provision('build-vt', { request: { volumeSizeGb: 10 } })
    assert.equal(adopted.volume?.adopted, true, 'found by its label after the lost answer')
    assert.equal(adopted.volume?.state, 'attached')
    assert.equal(volumesOf('build-vt').length, 1)
    assert.equal(volumeCreates('build-vt').length, 1, 'never created twice')

    for (const point of ['beforeCreate', 'created', 'attached'] as const) {
      const id = `build-vk-${point.toLowerCase()}`
      declare(id)
      const kill = () => {
        throw new Error('killed')
      }
      await assert.rejects(
        provision(id, {
          request: { volumeSizeGb: 10 },
          ...(point === 'beforeCreate'
            ? { beforeVolumeCreate: kill }
            : { afterVolumeStep: (step: string) => (step === point ? kill() : undefined) }),
        }),
        /killed/,
      )
      const done = await provision(id, { resume: true })
      assert.equal(done.volume?.state, 'attached', point)
      assert.equal(volumesOf(id).length, 1, `one volume after a kill at ${point}`)
      assert.ok(volumeCreates(id).length <= 1, `never a second create after a kill at ${point}`)
      assert.equal(volumesOf(id)[0]!.server, serversOf(id)[0]!.id)
    }

    // A volume with the node's name but not its label is someone else's: a conflict, never adopted.
    declare('build-vc')
    await client.createVolume({ name: 'build-vc', size: 10, location: 'fsn1', labels: { 'fleetkit.node_id': 'other' } })
    await rejectsWith(provision('build-vc', { request: { volumeSizeGb: 10 } }), 'PROVIDER_NAME_CONFLICT')
    assert.equal(volumesOf('build-vc').length, 0)
  })

  it('decommission detaches the volume and keeps it; with --delete-volume it is deleted exactly once, a failed delete retried', async () => {
    const decommission = (nodeId: string, deleteVolume: boolean) =>
      decommissionNode({ pool: gw.db.pool, nodeId, actor: 'test', clock, provider: () => client, deleteVolume })
    const [kept] = volumesOf('build-vt')
    const shown = await runFleetkit(['node', 'show', 'build-vt', '--json'], { env: { DATABASE_URL: gw.db.url } })
    assert.equal(shown.code, 0, shown.stderr)
    assertMatchesOutputSchema('node-show', shown.json)
    assert.deepEqual(shown.json.result.node.volume, {
      id: kept!.id,
      sizeGb: 10,
      state: 'attached',
      linuxDevice: kept!.linux_device,
    })
    const keptResult = await decommission('build-vt', false)
    assert.deepEqual(keptResult.volume, { id: kept!.id, state: 'detached', kept: true })
    assert.equal(stub.api.volumes.get(kept!.id)?.server, null, 'detached')
    assert.ok(stub.api.volumes.has(kept!.id), 'kept with its data')
    assert.ok(
      (await listEvents(gw.db.pool, { nodeId: 'build-vt' })).some(
        (e) => e.kind === 'provider_volume_detached' && e.data.kept === true,
      ),
    )

    const [doomed] = volumesOf('build-v')
    stub.inject({ method: 'DELETE', path: `/volumes/${doomed!.id}`, kind: 'status', status: 503, times: 4 })
    await rejectsWith(decommission('build-v', true), 'PROVIDER_VOLUME_DELETE_FAILED')
    assert.ok(stub.api.volumes.has(doomed!.id), 'still there after the failed delete')
    assert.equal((await getProvisionRow(gw.db.pool, 'build-v'))!.status, 'retired')
    const done = await decommission('build-v', true)
    assert.deepEqual(done.volume, { id: doomed!.id, state: 'deleted', kept: false })
    assert.equal(stub.api.volumes.has(doomed!.id), false)
    const deletes = stub.requests.filter((r) => r.method === 'DELETE' && r.path === `/volumes/${doomed!.id}`)
    assert.equal(deletes.filter((r) => r.status === 204 || r.status === 200).length, 1, 'deleted exactly once')
    const again = await decommission('build-v', true)
    assert.equal(again.volume, undefined, 'nothing owed any more')
  })

  it("decommission leaves alone a recorded server or volume ID that now names another node's (a local cloud restarted)", async () => {
    declare('build-w')
    await provision('build-w', { request: { volumeSizeGb: 10 } })
    const server = serversOf('build-w')[0]!
    const [volume] = volumesOf('build-w')
    // A restarted local cloud numbers anew: the IDs recorded for build-w now name servers and volumes of another node.
    stub.api.servers.get(server.id)!.labels['fleetkit.node_id'] = 'build-other'
    stub.api.volumes.get(volume!.id)!.labels['fleetkit.node_id'] = 'build-other'
    const before = stub.requests.length
    const decommission = () =>
      decommissionNode({ pool: gw.db.pool, nodeId: 'build-w', actor: 'test', clock, provider: () => client })
    const done = await decommission()
    const sent = stub.requests.slice(before)
    assert.deepEqual(
      sent.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`),
      [],
      'no delete, no detach',
    )
    assert.ok(stub.api.servers.has(server.id) && stub.api.volumes.get(volume!.id)?.server === server.id, 'untouched')
    assert.deepEqual(done.deletedServers, [])
    assert.deepEqual(done.volume, {
      id: volume!.id,
      state: 'deleted',
      kept: false,
      alreadyGone: { labelledFor: 'build-other' },
    })
    assert.match(
      done.message,
      new RegExp(
        `server ${server.id}, recorded for build-w, is now labelled fleetkit.node_id=build-other and was left alone`,
      ),
    )
    assert.match(
      done.message,
      new RegExp(
        `volume ${volume!.id}, recorded for build-w, is now labelled fleetkit.node_id=build-other and was left alone`,
      ),
    )
    assert.doesNotMatch(done.message, /deleted server|tries again/)
    const events = await listEvents(gw.db.pool, { nodeId: 'build-w' })
    const serverEvent = events.find((e) => e.kind === 'provider_server_deleted')!
    assert.deepEqual(serverEvent.data.server_ids, [])
    assert.equal(serverEvent.data.recorded_server_labelled_for, 'build-other')
    assert.equal(events.find((e) => e.kind === 'provider_volume_deleted')!.data.labelled_for, 'build-other')
    const again = await decommission()
    assert.equal(again.deletedServers, undefined, 'nothing owed any more')
    assert.equal(again.volume, undefined)
  })

  it('decommission of a node whose server and volume are already gone says so, never "deleted"', async () => {
    declare('build-g')
    await provision('build-g', { request: { volumeSizeGb: 10 } })
    const server = serversOf('build-g')[0]!
    const [volume] = volumesOf('build-g')
    stub.api.volumes.delete(volume!.id)
    stub.api.servers.delete(server.id)
    const done = await decommissionNode({
      pool: gw.db.pool,
      nodeId: 'build-g',
      actor: 'test',
      clock,
      provider: () => client,
    })
    assert.deepEqual(done.deletedServers, [server.id], 'a 404 counts as deleted')
    assert.match(
      done.message,
      new RegExp(`server ${server.id} was already gone; volume ${volume!.id} was already gone$`),
    )
    const [event] = await listEvents(gw.db.pool, { nodeId: 'build-g', kind: 'provider_server_deleted' })
    assert.deepEqual(event!.data.already_gone, [server.id])
  })

  it('a retired node (enrolled, drained, decommissioned, its server deleted) is NODE_STATE_CONFLICT with and without --resume: no request, nothing changed', async () => {
    declare('build-ret')
    await provision('build-ret', { waitMs: 600_000, afterStep: enrollHook('build-ret') })
    const server = serversOf('build-ret')[0]!.id
    await drainNode({ pool: gw.db.pool, nodeId: 'build-ret', actor: 'test', clock })
    await decommissionNode({ pool: gw.db.pool, nodeId: 'build-ret', actor: 'test', clock, provider: () => client })
    assert.equal(stub.api.servers.has(server), false)
    const state = async () => ({
      row: (
        await gw.db.pool.query<{ t: string }>(`SELECT row_to_json(n)::text AS t FROM nodes n WHERE id = 'build-ret'`)
      ).rows[0]!.t,
      events: await listEvents(gw.db.pool, { nodeId: 'build-ret' }),
    })
    const before = await state()
    const requests = stub.requests.length
    for (const resume of [false, true]) {
      const error = await rejectsWith(provision('build-ret', { resume, waitMs: 600_000 }), 'NODE_STATE_CONFLICT')
      assert.match(error.message, new RegExp(`it is retired \\(decommissioned, its server ${server} deleted\\)`))
      assert.match(
        (error as FleetkitError).actions[0]!,
        /declare a new node id in fleet.yaml, then: fleetkit node provision NEW-ID/,
      )
      assert.ok(!(error as FleetkitError).actions.some((a) => a.includes('--resume')), 'never told to resume it')
      assert.equal(stub.requests.length, requests, 'no provider request')
      assert.deepEqual(await state(), before, 'nothing changed')
    }
  })

  it('the CLI: an undeclared node is NODE_UNDECLARED with the YAML to add; a declared one is provisioned (--no-wait --json)', async () => {
    // A stub on the real clock whose actions finish at once: the CLI polls with real sleeps.
    const live = await startHetznerStub({ clock: systemClock, actionDurationMs: 10 })
    const dir = await mkdtemp(join(tmpdir(), 'fleetkit-provision-'))
    try {
      const file = join(dir, 'fleet.yaml')
      const fleet = validDefinition()
      fleet.gateway = { url: gw.agentUrl, enrollUrl: gw.enrollUrl }
      fleet.nodes.push({ id: 'build-cli', pool: 'build', state: 'active', ssh: { host: '10.20.0.6', user: 'ops' } })
      await writeFile(file, stringify(fleet))
      const env = {
        DATABASE_URL: gw.db.url,
        FLEETKIT_PKI_DIR: gw.pkiDir,
        HETZNER_API_URL: live.url,
        HETZNER_API_TOKEN: live.token,
      }
      const ghost = await runFleetkit(['node', 'provision', 'ghost-1', '--definition', file, '--json'], { env })
      assert.equal(ghost.json.code, 'NODE_UNDECLARED', ghost.stderr)
      assert.match(ghost.json.data.yaml, /nodes:\n {2}- id: ghost-1\n {4}pool: build/)
      assert.match(ghost.json.message, /add the entry printed above/)
      assertMatchesOutputSchema('node-provision', ghost.json)

      // An example definition never reaches a provider: refused before a request, for provision and replace.
      const exampleFile = join(dir, 'example.yaml')
      await writeFile(exampleFile, stringify({ ...fleet, example: true }))
      const before = live.requests.length
      for (const command of [
        ['node', 'provision', 'build-cli'],
        ['node', 'replace', 'build-cli'],
      ]) {
        const refused = await runFleetkit([...command, '--definition', exampleFile, '--json'], { env })
        assert.equal(refused.json.code, 'DEFINITION_IS_EXAMPLE', refused.stderr)
      }
      assert.equal(live.requests.length, before, 'no request reached the provider')

      // A wait and no wait at once is a usage error, not one of them chosen silently.
      const both = await runFleetkit(
        ['node', 'provision', 'build-cli', '--definition', file, '--wait', '90s', '--no-wait', '--json'],
        { env },
      )
      assert.equal(both.code, 2, both.stderr)
      assert.equal(both.json.code, 'USAGE_INVALID')
      assert.match(both.json.message, /--wait=90s cannot also be provided when using --no-wait/)
      assert.equal(live.requests.length, before, 'no request reached the provider')

      const run = await runFleetkit(
        ['node', 'provision', 'build-cli', '--definition', file, '--region', 'nbg1', '--no-wait', '--json'],
        { env },
      )
      assert.equal(run.code, 0, run.stderr)
      assertMatchesOutputSchema('node-provision', run.json)
      assert.equal(run.json.result.state, 'awaiting_enrollment')
      assert.equal(run.json.result.region, 'nbg1')
      const hostKey = run.json.result.hostKey as { publicKey: string; fingerprint: string }
      assert.match(hostKey.fingerprint, /^SHA256:/)
      assert.ok(!run.stdout.includes(live.token) && !run.stderr.includes(live.token))
      const resumed = await runFleetkit(
        ['node', 'provision', '--resume', 'build-cli', '--definition', file, '--no-wait'],
        {
          env,
        },
      )
      assert.equal(resumed.code, 0, resumed.stderr)
      assert.match(resumed.stdout, /build-cli: awaiting_enrollment; server \d+ \(cx32 in nbg1, ubuntu-24.04\)/)
      // Pinned in the state, where ssh reads it: nothing invites a copy into fleet.yaml.
      assert.ok(
        resumed.stdout.includes(
          `host key pinned in the state: ${hostKey.fingerprint}; ssh checks it by node id, so nothing needs copying into fleet.yaml`,
        ),
        resumed.stdout,
      )
      assert.ok(!resumed.stdout.includes('hostKey:'), resumed.stdout)
      assert.equal(live.requests.filter((r) => r.method === 'POST' && r.path === '/servers').length, 1)

      // Only a --rekey of a node whose fleet.yaml has another hostKey prints the line to put there.
      const declaredKey = generateSshHostKey('old', seededRng('cli-old-host-key')).publicKey
      // In build-cli's place: the pool's capacity budget holds three nodes.
      fleet.nodes = fleet.nodes.filter((n) => n.id !== 'build-cli')
      fleet.nodes.push({
        id: 'build-cli-k',
        pool: 'build',
        state: 'active',
        ssh: { user: 'ops' },
        hostKey: declaredKey,
      })
      await writeFile(file, stringify(fleet))
      const rekeyed = await runFleetkit(
        ['node', 'provision', 'build-cli-k', '--rekey', '--definition', file, '--region', 'nbg1', '--no-wait'],
        { env },
      )
      assert.equal(rekeyed.code, 0, rekeyed.stderr)
      assert.match(
        rekeyed.stdout,
        /fleet\.yaml's hostKey of build-cli-k is another key, and fleetkit inventory refuses/,
      )
      const pinned = (await getNode(gw.db.pool, 'build-cli-k'))!.hostKeyPublic!
      assert.ok(rekeyed.stdout.includes(`\n  hostKey: ${pinned}\n`), rekeyed.stdout)
    } finally {
      await live.close()
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('the CLI against `fleetkit provider stub`: the provisioned server is the node: inventory and node show use its address; an ssh.host that disagrees is refused', async () => {
    const stubProcess = startProcess(process.execPath, [fleetkitEntry(), 'provider', 'stub', '--json'], {
      env: overlayEnv({}),
    })
    const dir = await mkdtemp(join(tmpdir(), 'fleetkit-address-'))
    try {
      await eventually('the stub startup line', () => stubProcess.stdout().includes('\n'), {
        timeoutMs: 60_000,
        stop: () => (stubProcess.exit() ? `stub exited: ${stubProcess.stderr()}` : undefined),
      })
      const startup = JSON.parse(stubProcess.stdout().split('\n')[0]!) as { result: { url: string; token: string } }
      const env = {
        DATABASE_URL: gw.db.url,
        FLEETKIT_PKI_DIR: gw.pkiDir,
        FLEETKIT_STATE_DIR: join(dir, 'state'),
        HETZNER_API_URL: startup.result.url,
        HETZNER_API_TOKEN: startup.result.token,
      }
      const fleet = validDefinition()
      fleet.gateway = { url: gw.agentUrl, enrollUrl: gw.enrollUrl }
      // Pool build has a provider (providers.hetzner, an image): app-cli declares its account, no ssh.host.
      fleet.nodes.push({ id: 'app-cli', pool: 'build', state: 'active', ssh: { user: 'ops' } })
      const file = join(dir, 'fleet.yaml')
      await writeFile(file, stringify(fleet))

      // Before provisioning it has no address: left out of the inventory, naming the command.
      const before = await runFleetkit(['inventory', '--definition', file, '--output', join(dir, 'before.yml')], {
        env,
      })
      assert.equal(before.code, 0, before.stderr)
      assert.match(
        before.stdout,
        /Left out \(no address\): app-cli, not provisioned yet .*: fleetkit node provision app-cli/,
      )
      assert.equal(
        (parse(await readFile(join(dir, 'before.yml'), 'utf8')) as Inventory).all.hosts['app-cli'],
        undefined,
      )

      const run = await runFleetkit(
        ['node', 'provision', 'app-cli', '--definition', file, '--region', 'fsn1', '--no-wait', '--json'],
        { env, timeout: 90_000 },
      )
      assert.equal(run.code, 0, run.stderr)
      assertMatchesOutputSchema('node-provision', run.json)
      const provisioned = run.json.result as { serverId: number; publicIpv4: string; sshAddress: string }
      assert.match(provisioned.publicIpv4, /^198\.18\.\d+\.\d+$/, 'the stub gives 198.18.0.0/15 addresses')
      assert.equal(provisioned.sshAddress, provisioned.publicIpv4)
      const pinned = (run.json.result.hostKey as { publicKey: string }).publicKey

      const inventoryPath = join(dir, 'inventory.yml')
      const written = await runFleetkit(['inventory', '--definition', file, '--output', inventoryPath, '--json'], {
        env,
      })
      assert.equal(written.code, 0, written.stderr)
      assertMatchesOutputSchema('inventory', written.json)
      assert.ok(!(written.json.result.unprovisioned as { node: string }[]).some((u) => u.node === 'app-cli'))
      const inventory = parse(await readFile(inventoryPath, 'utf8'), { version: '1.1' }) as Inventory
      assert.equal(inventory.all.hosts['app-cli']?.ansible_host, provisioned.publicIpv4)
      assert.equal(inventory.all.hosts['app-cli']?.ansible_user, 'ops')
      // The host key node provision pinned in the state, as ssh checks it (keyed by node id).
      assert.ok(
        (await readFile(join(dir, 'known_hosts'), 'utf8')).includes(
          `app-cli ${pinned.split(' ').slice(0, 2).join(' ')}\n`,
        ),
      )

      const shown = await runFleetkit(['node', 'show', 'app-cli', '--json'], { env })
      assert.equal(shown.code, 0, shown.stderr)
      assertMatchesOutputSchema('node-show', shown.json)
      assert.equal(shown.json.result.node.serverId, provisioned.serverId)
      assert.equal(shown.json.result.node.address.ssh, provisioned.publicIpv4)
      assert.equal(shown.json.result.node.address.publicIpv4, provisioned.publicIpv4)
      const text = await runFleetkit(['node', 'show', 'app-cli'], { env })
      assert.match(
        text.stdout,
        new RegExp(
          `address {5}ssh ${provisioned.publicIpv4.replaceAll('.', '\\.')} \\(the server fleetkit provisioned\\)`,
        ),
      )

      // An ssh.host that says otherwise is refused, naming both addresses; nothing is written.
      const node = fleet.nodes.find((n) => n.id === 'app-cli')!
      node.ssh = { host: '10.20.0.99', user: 'ops' }
      await writeFile(file, stringify(fleet))
      const refusedPath = join(dir, 'refused', 'inventory.yml')
      const refused = await runFleetkit(['inventory', '--definition', file, '--output', refusedPath, '--json'], {
        env,
      })
      assert.equal(refused.code, 1, refused.stderr)
      assert.equal(refused.json.code, 'NODE_ADDRESS_DISAGREES')
      assert.match(refused.json.message, /ssh\.host 10\.20\.0\.99/)
      assert.ok(refused.json.message.includes(provisioned.publicIpv4), refused.json.message)
      assert.equal(
        await readdir(join(dir, 'refused')).catch(() => 'absent'),
        'absent',
        'neither the inventory nor known_hosts was written',
      )
      const runsBefore = (await gw.db.pool.query('SELECT count(*)::int AS n FROM sync_runs')).rows[0].n as number
      for (const command of [['sync', '--dry-run'], ['drift']]) {
        const plan = await runFleetkit([...command, '--definition', file, '--json'], { env })
        assert.equal(plan.json.code, 'NODE_ADDRESS_DISAGREES', `${command.join(' ')}: ${plan.stdout}${plan.stderr}`)
      }
      const runsAfter = (await gw.db.pool.query('SELECT count(*)::int AS n FROM sync_runs')).rows[0].n as number
      assert.equal(runsAfter, runsBefore, 'no sync or drift run was opened')

      // Set to the provisioned address, it agrees.
      node.ssh = { host: provisioned.publicIpv4, user: 'ops' }
      await writeFile(file, stringify(fleet))
      const agreed = await runFleetkit(['inventory', '--definition', file, '--output', inventoryPath], { env })
      assert.equal(agreed.code, 0, agreed.stderr)
    } finally {
      stubProcess.child.kill('SIGINT')
      await stubProcess.exited
      await rm(dir, { recursive: true, force: true })
    }
  })
})

type Inventory = { all: { hosts: Record<string, Record<string, unknown> | undefined> } }
