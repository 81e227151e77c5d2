// One winner (issue 37, item 3): 20 concurrent `node provision`, `--resume`, `node replace` and `node decommission`
// runs on one node, each on a pool of its own (as 20 processes would be), against the Hetzner stub.
// Exactly one acts; the 19 others are NODE_BUSY, naming the command that holds the node, before any
// provider request; one create request (or delete) is sent; the secret stored is the one in the
// server's seed. The race is forced: the winner is held (in its beforeCreate hook, or the decommission's
// confirmation) until the 19 others were refused. A run after the winner ended proceeds normally, and
// so does one after a holder whose connection died.
import assert from 'node:assert/strict'

import pgModule from 'pg'
import type pg from 'pg'

import { type FleetkitError, isFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { seededRng } from '../../../src/config/rng.js'
import { loadHostPolicy } from '../../../src/definition/host-policy.js'
import type { Definition } from '../../../src/definition/types.js'
import { decommissionNode } from '../../../src/lifecycle/node/node-decommission.js'
import { type ProvisionOptions, provisionNode } from '../../../src/lifecycle/provision/node-provision.js'
import { replaceNode } from '../../../src/lifecycle/provision/node-replace.js'
import type { HetznerClient } from '../../../src/provider/hetzner.js'
import type { HetznerStub } from '../../../src/provider/hetzner-stub.js'
import { getProvisionRow } from '../../../src/store/provider/provisioning.js'
import { eventually } from '../../support/eventually.js'
import type { TestGateway } from '../../support/gateway.js'
import type { DisposablePostgres } from '../../support/postgres.js'
import { type ProvisionWorld, startProvisionWorld } from '../../support/provision-world.js'

const RUNS = 20

describe('one winner: 20 concurrent provision, --resume, replace and decommission runs of one node', function () {
  this.timeout(120_000)
  let world: ProvisionWorld
  let pg: DisposablePostgres
  let gw: TestGateway
  let stub: HetznerStub
  let client: HetznerClient
  let definition: Definition
  let clock: ProvisionWorld['clock']
  let sleep: ProvisionWorld['sleep']
  let pools: pg.Pool[] = []
  const creates = (name: string) => world.creates(name)
  const serversOf = (nodeId: string) => world.serversOf(nodeId)

  /** The stored secret hash is the SHA-256 of the one secret in the (only) create request's seed. */
  async function assertStoredSecretIsTheSeeds(nodeId: string): Promise<void> {
    assert.equal(creates(nodeId).length, 1)
    assert.ok(await world.secretOf(nodeId), "the stored hash is the one of the secret in the server's seed")
  }

  /** A client that counts the provider calls of one run (every method it is asked for). */
  function countingClient(): { client: HetznerClient; calls: () => number } {
    let calls = 0
    const counted = new Proxy(client, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown
        if (typeof value !== 'function') return value
        return (...args: unknown[]) => {
          calls += 1
          return (value as (...a: unknown[]) => unknown).apply(target, args)
        }
      },
    })
    return { client: counted, calls: () => calls }
  }

  const ownPool = () => {
    const pool = new pgModule.Pool({ connectionString: gw.db.url, max: 3 })
    // A connection terminated while checked out and idle (the killed holder below) emits 'error'; the
    // CLI's guarded pool listens for it (state-guard.ts), a bare pool must too.
    pool.on('connect', (c) => c.on('error', () => {}))
    pools.push(pool)
    return pool
  }

  const provisionOptions = (nodeId: string, extra: Partial<ProvisionOptions> = {}): ProvisionOptions => ({
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
    rng: seededRng(`winner-${nodeId}-${Math.random()}`),
    sleep,
    ...extra,
  })

  type Outcome<T> = { value: T; calls: number } | { error: FleetkitError; calls: number }

  /**
   * RUNS concurrent runs; `run(gate, client)` is one of them, which must await `gate` where only the
   * acting run gets (so it stays the holder until the 19 others were refused).
   */
  async function race<T>(
    run: (gate: () => Promise<void>, client: HetznerClient, pool: pg.Pool) => Promise<T>,
  ): Promise<Outcome<T>[]> {
    let refused = 0
    let open!: () => void
    const opened = new Promise<void>((resolve) => (open = resolve))
    const gate = async () => {
      await eventually(`the ${RUNS - 1} other runs refused`, async () => (refused >= RUNS - 1 ? true : undefined), {
        timeoutMs: 60_000,
        intervalMs: 20,
      })
      open()
    }
    const runs = Array.from({ length: RUNS }, async (): Promise<Outcome<T>> => {
      const counting = countingClient()
      try {
        return { value: await run(gate, counting.client, ownPool()), calls: counting.calls() }
      } catch (error) {
        refused += 1
        assert.ok(isFleetkitError(error), String(error))
        return { error, calls: counting.calls() }
      }
    })
    const outcomes = await Promise.all(runs)
    await opened
    return outcomes
  }

  function oneWinner<T>(outcomes: Outcome<T>[], holder: string): T {
    const winners = outcomes.filter((o): o is { value: T; calls: number } => 'value' in o)
    const losers = outcomes.filter((o): o is { error: FleetkitError; calls: number } => 'error' in o)
    assert.equal(winners.length, 1, JSON.stringify(losers.map((l) => [l.error.code, l.error.message])))
    assert.deepEqual(
      losers.map((l) => l.error.code),
      Array(RUNS - 1).fill('NODE_BUSY'),
    )
    for (const loser of losers) {
      assert.equal(loser.calls, 0, 'a refused run sent no provider request')
      assert.equal(loser.error.data?.holder, holder)
      assert.match(loser.error.message, new RegExp(`\`fleetkit ${holder}\``))
    }
    return winners[0]!.value
  }

  before(async () => {
    world = await startProvisionWorld()
    ;({ pg, gw, stub, client, definition, clock, sleep } = world)
    for (const id of ['win-1', 'win-2', 'win-3', 'win-4']) definition.nodes.push({ id, pool: 'build', state: 'active' })
  })
  afterEach(async () => {
    await Promise.all(pools.map((p) => p.end()))
    pools = []
  })
  after(async () => {
    await world?.close()
  })

  it('node provision: one creates the one server and stores the secret of its seed; 19 are NODE_BUSY; --resume afterwards proceeds', async () => {
    const outcomes = await race((gate, runClient, pool) =>
      provisionNode(provisionOptions('win-1', { pool, client: runClient, beforeCreate: gate })),
    )
    const won = oneWinner(outcomes, 'node provision win-1')
    assert.equal(won.state, 'awaiting_enrollment')
    assert.equal(creates('win-1').length, 1, 'exactly one POST /servers')
    assert.equal(serversOf('win-1').length, 1)
    await assertStoredSecretIsTheSeeds('win-1')

    const again = await provisionNode(provisionOptions('win-1', { resume: true }))
    assert.equal(again.serverId, won.serverId)
    assert.equal(creates('win-1').length, 1, 'the resume after it sent no create')
  })

  it('node provision --resume of a run killed before its create: one creates; 19 are NODE_BUSY', async () => {
    await assert.rejects(
      provisionNode(
        provisionOptions('win-2', {
          afterStep: (step) => {
            if (step === 'pending') throw new Error('killed')
          },
        }),
      ),
      /killed/,
    )
    assert.equal(creates('win-2').length, 0)
    const outcomes = await race((gate, runClient, pool) =>
      provisionNode(provisionOptions('win-2', { pool, client: runClient, resume: true, beforeCreate: gate })),
    )
    oneWinner(outcomes, 'node provision --resume win-2')
    assert.equal(creates('win-2').length, 1, 'exactly one POST /servers')
    assert.equal(serversOf('win-2').length, 1)
    await assertStoredSecretIsTheSeeds('win-2')
  })

  it('node replace: one provisions the one successor and drains the old node; 19 are NODE_BUSY', async () => {
    const old = await provisionNode(
      provisionOptions('win-4', { waitMs: 600_000, afterStep: world.enrollHook('win-4') }),
    )
    assert.equal(old.state, 'enrolled')
    const outcomes = await race((gate, runClient, pool) =>
      replaceNode({
        ...provisionOptions('win-4'),
        pool,
        client: runClient,
        oldId: 'win-4',
        actor: 'race',
        waitMs: 600_000,
        beforeCreate: gate,
        afterStep: world.enrollHook('win-4-r2'),
      }),
    )
    const won = oneWinner(outcomes, 'node replace win-4')
    assert.equal(won.replacement.node, 'win-4-r2')
    assert.equal(won.replacement.state, 'enrolled')
    assert.equal(won.drain.to, 'draining')
    assert.equal(creates('win-4-r2').length, 1, 'exactly one POST /servers for the successor')
    assert.equal(serversOf('win-4-r2').length, 1)
    await assertStoredSecretIsTheSeeds('win-4-r2')
  })

  it('node decommission: one retires the node and deletes its server once; 19 are NODE_BUSY; a later run finds nothing owed', async () => {
    const serverId = serversOf('win-1')[0]!.id
    const outcomes = await race((gate, runClient, pool) =>
      decommissionNode({ pool, nodeId: 'win-1', actor: 'race', clock, provider: () => runClient, confirm: gate }),
    )
    const won = oneWinner(outcomes, 'node decommission win-1')
    assert.deepEqual(won.deletedServers, [serverId])
    const deletes = stub.requests.filter((r) => r.method === 'DELETE' && r.path === `/servers/${serverId}`)
    assert.equal(deletes.length, 1, 'exactly one DELETE')
    const later = await decommissionNode({
      pool: gw.db.pool,
      nodeId: 'win-1',
      actor: 'race',
      clock,
      provider: () => client,
    })
    assert.equal(later.changed, false)
    assert.equal(later.deletedServers, undefined)
    assert.equal((await getProvisionRow(gw.db.pool, 'win-1'))!.status, 'retired')
  })

  it('a holder whose connection dies frees the node at once: the next run proceeds', async () => {
    const pool = ownPool()
    let holderPid = 0
    const killed = provisionNode(
      provisionOptions('win-3', {
        pool,
        beforeCreate: async () => {
          const { rows } = await gw.db.pool.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity WHERE application_name = 'fleetkit: node provision win-3'`,
          )
          holderPid = rows[0]!.pid
          const busy = await provisionNode(provisionOptions('win-3', { resume: true })).catch((e: unknown) => e)
          assert.ok(isFleetkitError(busy) && busy.code === 'NODE_BUSY', String(busy))
          await gw.db.pool.query('SELECT pg_terminate_backend($1)', [holderPid])
          throw new Error('killed with its connection')
        },
      }),
    )
    await assert.rejects(killed, /killed with its connection/)
    assert.ok(holderPid > 0)
    const resumed = await provisionNode(provisionOptions('win-3', { resume: true }))
    assert.equal(resumed.state, 'awaiting_enrollment')
    assert.equal(creates('win-3').length, 1)
    await assertStoredSecretIsTheSeeds('win-3')
  })
})
