// The one create-or-adopt flow of a node's server and volume, against the local Hetzner stub: what
// carries the node's labels is adopted (found first, or holding the name after a conflict, as a
// concurrent run leaves it); a name held by a stranger is PROVIDER_NAME_CONFLICT naming it, never adopted.
import assert from 'node:assert/strict'

import { type FleetkitError, isFleetkitError } from '../../../src/checks/fleetkit-error.js'
import type { HetznerClient } from '../../../src/provider/hetzner.js'
import type { HetznerStub } from '../../../src/provider/hetzner-stub.js'
import type { CreateServerRequest, CreateVolumeRequest, Labels } from '../../../src/provider/hetzner-types.js'
import { stubAndClient } from '../../support/hetzner-timeline.js'

const OURS: Labels = { 'fleetkit.node_id': 'build-01', 'fleetkit.fleet': 'acme', 'fleetkit.pool': 'build' }

function serverRequest(labels: Labels = OURS): CreateServerRequest {
  return { name: 'build-01', server_type: 'cx22', image: 'debian-12', location: 'fsn1', labels }
}

function volumeRequest(labels: Labels = OURS): CreateVolumeRequest {
  return { name: 'build-01', size: 10, location: 'fsn1', labels }
}

async function failure(promise: Promise<unknown>): Promise<FleetkitError> {
  try {
    await promise
  } catch (error) {
    assert.ok(isFleetkitError(error), `expected a FleetkitError, got ${String(error)}`)
    return error
  }
  assert.fail('expected the call to fail')
}

/** What another process does through the API, not through the client under test. */
async function createDirectly(stub: HetznerStub, path: '/servers' | '/volumes', body: object): Promise<number> {
  const res = await fetch(`${stub.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stub.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  assert.equal(res.status, 201)
  const answer = (await res.json()) as { server?: { id: number }; volume?: { id: number } }
  return (answer.server ?? answer.volume)!.id
}

/** One kind of resource the flow creates, as these tests drive it. */
interface Kind {
  kind: 'server' | 'volume'
  path: '/servers' | '/volumes'
  request: (labels?: Labels) => object
  create: (client: HetznerClient, labels?: Labels) => Promise<{ adopted: boolean; id: number }>
  count: (stub: HetznerStub) => number
}

const requestsTo = (stub: HetznerStub, method: string, path: string) =>
  stub.requests.filter((r) => r.method === method && r.path === path)

describe('provider: create or adopt a node’s server and volume', () => {
  const stubs: HetznerStub[] = []
  async function setUp(...args: Parameters<typeof stubAndClient>) {
    const made = await stubAndClient(...args)
    stubs.push(made.stub)
    return made
  }
  afterEach(async () => {
    await Promise.all(stubs.splice(0).map((stub) => stub.close()))
  })

  const kinds: Kind[] = [
    {
      kind: 'server',
      path: '/servers',
      request: serverRequest,
      create: async (client, labels) => {
        const { adopted, server } = await client.createServer(serverRequest(labels))
        return { adopted, id: server.id }
      },
      count: (stub) => stub.api.servers.size,
    },
    {
      kind: 'volume',
      path: '/volumes',
      request: volumeRequest,
      create: async (client, labels) => {
        const { adopted, volume } = await client.createVolume(volumeRequest(labels))
        return { adopted, id: volume.id }
      },
      count: (stub) => stub.api.volumes.size,
    },
  ]
  for (const { kind, path, request, create, count } of kinds) {
    describe(`a ${kind}`, () => {
      it('a name conflict with one carrying the node’s own labels (a concurrent run’s) adopts it', async () => {
        const { stub, client } = await setUp()
        const theirs = await createDirectly(stub, path, request())
        const result = await create(client)
        assert.equal(result.adopted, true)
        assert.equal(result.id, theirs)
        assert.equal(count(stub), 1)
        assert.equal(requestsTo(stub, 'POST', path).length, 2, 'the concurrent create and ours, never a third')
        const lookups = requestsTo(stub, 'GET', path)
        assert.deepEqual(lookups.at(-1)!.query.name, ['build-01'], 'the holder of the name is what is checked')
      })

      it('a name held by a stranger is PROVIDER_NAME_CONFLICT naming it, never adopted', async () => {
        const { stub, client } = await setUp()
        const stranger = await createDirectly(stub, path, request({}))
        const error = await failure(create(client))
        assert.equal(error.code, 'PROVIDER_NAME_CONFLICT')
        assert.match(error.message, new RegExp(`a ${kind} named build-01 \\(id ${stranger}\\) .*never adopted`))
        assert.ok(
          error.actions.some((action) => action.includes(`${kind} ${stranger}`)),
          error.actions.join('; '),
        )
        assert.equal(error.data?.[`${kind}Id`], stranger)
        assert.deepEqual(error.data?.fields, ['name'], 'what the API said stays in data')
        assert.equal(count(stub), 1)
      })

      it('the same node id of another fleet is a stranger too: every label must match', async () => {
        const { stub, client } = await setUp()
        await createDirectly(stub, path, request({ ...OURS, 'fleetkit.fleet': 'other' }))
        assert.equal((await failure(create(client))).code, 'PROVIDER_NAME_CONFLICT')
        assert.equal((await failure(create(client))).code, 'PROVIDER_NAME_CONFLICT', 'and stays one')
      })

      it('an ambiguous create that took effect is found by its label and not sent again', async () => {
        const { stub, client } = await setUp({}, { requestTimeoutMs: 200 })
        stub.inject({ method: 'POST', path, kind: 'reset', afterEffect: true })
        const result = await create(client)
        assert.equal(result.adopted, true)
        assert.equal(requestsTo(stub, 'POST', path).length, 1)
        assert.deepEqual(requestsTo(stub, 'GET', path)[0]!.query.label_selector, ['fleetkit.node_id=build-01'])
      })

      it('refuses a request without the node id label before sending anything', async () => {
        const { stub, client } = await setUp()
        assert.equal((await failure(create(client, { 'fleetkit.fleet': 'acme' }))).code, 'INTERNAL_ERROR')
        assert.equal(stub.requests.length, 0)
      })
    })
  }

  describe('before a create (findOwnServer, findOwnVolume)', () => {
    it('finds the node’s own by its label, and nothing when the name is free', async () => {
      const { stub, client } = await setUp()
      assert.equal(await client.findOwnServer('build-01', OURS), undefined)
      assert.equal(await client.findOwnVolume('build-01', OURS), undefined)
      const server = await createDirectly(stub, '/servers', serverRequest())
      const volume = await createDirectly(stub, '/volumes', volumeRequest())
      assert.equal((await client.findOwnServer('build-01', OURS))?.id, server)
      assert.equal((await client.findOwnVolume('build-01', OURS))?.id, volume)
    })

    it('adopts a server a concurrent run created between the label lookup and the name lookup', async () => {
      const late: { stub?: HetznerStub } = {}
      let raced = false
      // The other run's create lands right after our label lookup answered "nothing".
      const racing: typeof fetch = async (input, init) => {
        const response = await fetch(input, init)
        if (!raced && String(input).includes('label_selector=')) {
          raced = true
          await createDirectly(late.stub!, '/servers', serverRequest())
        }
        return response
      }
      const made = await setUp({}, { fetch: racing })
      late.stub = made.stub
      const found = await made.client.findOwnServer('build-01', OURS)
      assert.equal(raced, true)
      assert.equal(found?.name, 'build-01')
      assert.deepEqual(found?.labels, OURS)
    })

    it('a stranger holding the name is PROVIDER_NAME_CONFLICT naming it', async () => {
      const { stub, client } = await setUp()
      const stranger = await createDirectly(stub, '/servers', serverRequest({}))
      const error = await failure(client.findOwnServer('build-01', OURS))
      assert.equal(error.code, 'PROVIDER_NAME_CONFLICT')
      assert.equal(error.data?.serverId, stranger)
      assert.match(error.actions[0]!, new RegExp(`rename or delete server ${stranger}`))
    })
  })
})
