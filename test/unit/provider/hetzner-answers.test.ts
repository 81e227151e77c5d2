// The Hetzner client reads every answer before using it: malformed answers (sent by a proxy in front
// of the stub) are PROVIDER_RESPONSE_INVALID naming the field, a create without a usable server is
// found by its label, no request goes out for an ID that is not one, and answers past 4 MiB are refused.
import assert from 'node:assert/strict'

import { type FleetkitError, isFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { seededRng } from '../../../src/config/rng.js'
import { HetznerClient } from '../../../src/provider/hetzner.js'
import type { HetznerStub } from '../../../src/provider/hetzner-stub.js'
import { MAX_RESPONSE_BYTES } from '../../../src/provider/hetzner-transport.js'
import type { CreateServerRequest } from '../../../src/provider/hetzner-types.js'
import { type HetznerProxy, startHetznerProxy } from '../../support/hetzner-proxy.js'
import { stubAndClient } from '../../support/hetzner-timeline.js'

function serverRequest(nodeId: string): CreateServerRequest {
  return {
    name: nodeId,
    server_type: 'cx22',
    image: 'debian-12',
    location: 'fsn1',
    labels: { 'fleetkit.node_id': nodeId, 'fleetkit.fleet': 'acme', 'fleetkit.pool': 'build' },
  }
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

/** The server part of a create answer, changed by `change`. */
const serverWith =
  (change: (server: Record<string, unknown>) => void) =>
  (body: Record<string, unknown>): Record<string, unknown> => {
    const server = { ...(body.server as Record<string, unknown>) }
    change(server)
    return { ...body, server }
  }

describe('provider: the Hetzner client reads every answer before using it', () => {
  let stub: HetznerStub
  let proxy: HetznerProxy
  let client: HetznerClient

  beforeEach(async () => {
    const made = await stubAndClient()
    stub = made.stub
    proxy = await startHetznerProxy(stub.url)
    client = new HetznerClient({
      env: { HETZNER_API_TOKEN: stub.token },
      baseUrl: proxy.url,
      clock: made.timeline.clock,
      sleep: made.timeline.sleep,
      rng: seededRng('hetzner-answers'),
    })
  })
  afterEach(async () => {
    await proxy.close()
    await stub.close()
  })

  const creates = () => stub.requests.filter((r) => r.method === 'POST' && r.path === '/servers')
  const serversOf = (nodeId: string) =>
    [...stub.api.servers.values()].filter((s) => s.labels['fleetkit.node_id'] === nodeId)

  describe('a create answer without a usable server is an ambiguous create, found by its label', () => {
    const cases: [string, (body: Record<string, unknown>) => unknown][] = [
      ['without server', ({ server: _server, ...rest }) => rest],
      ['without server.id', serverWith((s) => delete s.id)],
      ['with server.id a string', serverWith((s) => (s.id = String(s.id)))],
      ['with server.id 0', serverWith((s) => (s.id = 0))],
      ['without a body', () => null],
    ]
    for (const [what, body] of cases)
      it(`${what}: adopted by its label, the create sent once`, async () => {
        proxy.rewrite({ method: 'POST', path: '/servers', body })
        const created = await client.createServer(serverRequest('build-1'))
        assert.equal(created.adopted, true)
        assert.equal(serversOf('build-1').length, 1)
        assert.equal(created.server.id, serversOf('build-1')[0]!.id)
        assert.equal(creates().length, 1, 'never sent again')
      })

    it('when nothing carries the labels: PROVIDER_RESPONSE_INVALID naming server.id and the path', async () => {
      // Answered by the proxy alone: the stub never saw the create, so the label finds nothing.
      proxy.rewrite({ method: 'POST', path: '/servers', forward: false, body: () => ({ server: { name: 'build-2' } }) })
      const error = await failure(client.createServer(serverRequest('build-2')))
      assert.equal(error.code, 'PROVIDER_RESPONSE_INVALID')
      assert.equal(error.data?.field, 'server.id')
      assert.equal(error.data?.path, '/servers')
      assert.equal(error.data?.method, 'POST')
      assert.equal(error.data?.ambiguous, true)
      assert.match(error.message, /POST \/servers .*server\.id.*missing.*positive integer/)
      assert.ok(
        stub.requests.some((r) => r.method === 'GET' && r.query.label_selector?.[0] === 'fleetkit.node_id=build-2'),
        'looked up by its label',
      )
    })

    it('a create answer whose action has no status is ambiguous too: adopted', async () => {
      proxy.rewrite({
        method: 'POST',
        path: '/servers',
        body: (body) => ({ ...body, action: { ...(body.action as object), status: undefined } }),
      })
      const created = await client.createServer(serverRequest('build-3'))
      assert.equal(created.adopted, true)
      assert.equal(creates().length, 1)
    })
  })

  describe('reads name the field and the path', () => {
    async function invalid(call: () => Promise<unknown>, field: string, path: string) {
      const error = await failure(call())
      assert.equal(error.code, 'PROVIDER_RESPONSE_INVALID', error.message)
      assert.equal(error.data?.field, field)
      assert.equal(error.data?.path, path)
      assert.equal(error.data?.ambiguous, false)
      assert.ok(!error.message.includes(stub.token) && !JSON.stringify(error.data).includes(stub.token))
      return error
    }

    it('a server without labels, in a list and alone', async () => {
      const { server } = await client.createServer(serverRequest('build-4'))
      const dropLabels = (s: Record<string, unknown>) => ({ ...s, labels: undefined })
      proxy.rewrite({
        method: 'GET',
        path: '/servers',
        body: (b) => ({ ...b, servers: (b.servers as Record<string, unknown>[]).map(dropLabels) }),
      })
      await invalid(() => client.listServers(), 'servers[0].labels', '/servers')
      proxy.rewrite({
        method: 'GET',
        path: `/servers/${server.id}`,
        body: (b) => ({ server: dropLabels(b.server as never) }),
      })
      await invalid(() => client.getServer(server.id), 'server.labels', `/servers/${server.id}`)
    })

    it('a label value that is not a string, a server id that is not a number, an ipv4 without ip', async () => {
      const { server } = await client.createServer(serverRequest('build-5'))
      const path = `/servers/${server.id}`
      proxy.rewrite({ method: 'GET', path, body: serverWith((s) => (s.labels = { 'fleetkit.node_id': 5 })) })
      await invalid(() => client.getServer(server.id), 'server.labels.fleetkit.node_id', path)
      proxy.rewrite({ method: 'GET', path, body: serverWith((s) => (s.id = 'x1')) })
      const error = await invalid(() => client.getServer(server.id), 'server.id', path)
      assert.equal(error.data?.found, 'a string of 2 characters', 'the type, never the value of a string')
      proxy.rewrite({ method: 'GET', path, body: serverWith((s) => (s.public_net = { ipv4: {}, ipv6: null })) })
      await invalid(() => client.getServer(server.id), 'server.public_net.ipv4.ip', path)
    })

    it('a server address that is not one (a public IPv4, the IPv6 network, a private one): refused, never echoed', async () => {
      const { server } = await client.createServer(serverRequest('build-9'))
      const path = `/servers/${server.id}`
      const stubbed = (await client.getServer(server.id))!
      // As the API answers: an IPv4 address and the server's IPv6 network.
      assert.match(stubbed.public_net.ipv4!.ip, /^198\.18\.[0-9]+\.[0-9]+$/)
      assert.match(stubbed.public_net.ipv6!.ip, /^2001:db8:[0-9a-f]+::\/64$/)
      const injected = '198.18.0.5\n  ansible_ssh_common_args: -oProxyCommand=touch /tmp/PWNED\u001b[2J'
      const publicNet = (ipv4: unknown, ipv6: unknown) => serverWith((s) => (s.public_net = { ipv4, ipv6 }))
      const cases: [string, (body: Record<string, unknown>) => unknown][] = [
        ['server.public_net.ipv4.ip', publicNet({ ip: injected }, null)],
        ['server.public_net.ipv4.ip', publicNet({ ip: '2001:db8::1' }, null)],
        ['server.public_net.ipv4.ip', publicNet({ ip: '198.18.0.5/32' }, null)],
        ['server.public_net.ipv4.ip', publicNet({ ip: 'localhost' }, null)],
        ['server.public_net.ipv6.ip', publicNet(null, { ip: '2001:db8::/64 ; touch /tmp/PWNED' })],
        ['server.public_net.ipv6.ip', publicNet(null, { ip: '2001:db8::/129' })],
        ['server.public_net.ipv6.ip', publicNet(null, { ip: 'fe80::1%eth0' })],
        ['server.public_net.ipv6.ip', publicNet(null, { ip: '198.18.0.5' })],
        ['server.private_net[0].ip', serverWith((s) => (s.private_net = [{ network: 1, ip: injected }]))],
      ]
      for (const [field, body] of cases) {
        proxy.rewrite({ method: 'GET', path, body })
        const error = await invalid(() => client.getServer(server.id), field, path)
        assert.match(error.message, /not an IPv[46] (address|network)/)
        assert.ok(!/PWNED|eth0|localhost/.test(error.message + JSON.stringify(error.data)), error.message)
      }
      // A bare IPv6 address is taken as well as a network; a private network's IPv4 address is.
      proxy.rewrite({
        method: 'GET',
        path,
        body: serverWith((s) => {
          s.public_net = { ipv4: null, ipv6: { ip: '2001:db8:5::7' } }
          s.private_net = [{ network: 1, ip: '10.0.0.2', alias_ips: [], mac_address: '86:00:00:00:00:01' }]
        }),
      })
      const read = (await client.getServer(server.id))!
      assert.equal(read.public_net.ipv6!.ip, '2001:db8:5::7')
      assert.equal(read.private_net[0]!.ip, '10.0.0.2')
    })

    it('an action without a status', async () => {
      const { action } = await client.createServer(serverRequest('build-6'))
      proxy.rewrite({
        method: 'GET',
        path: '/actions',
        body: (b) => ({ ...b, actions: (b.actions as object[]).map((a) => ({ ...a, status: undefined })) }),
      })
      await invalid(() => client.waitForActions([action!.id]), 'actions[0].status', '/actions')
    })

    it('a page without meta, and a next_page that is not after the page', async () => {
      proxy.rewrite({ method: 'GET', path: '/locations', body: ({ meta: _meta, ...rest }) => rest })
      await invalid(() => client.listLocations(), 'meta', '/locations')
      proxy.rewrite({
        method: 'GET',
        path: '/locations',
        body: (b) => ({ ...b, meta: { pagination: { next_page: 1 } } }),
      })
      await invalid(() => client.listLocations(), 'meta.pagination.next_page', '/locations')
      proxy.rewrite({ method: 'GET', path: '/locations', body: (b) => ({ ...b, locations: 'fsn1' }) })
      await invalid(() => client.listLocations(), 'locations', '/locations')
    })

    it('a change answered without its action, and a firewall whose rules are not a list', async () => {
      const { server } = await client.createServer(serverRequest('build-7'))
      proxy.rewrite({ method: 'DELETE', path: `/servers/${server.id}`, body: () => ({}) })
      await invalid(() => client.deleteServer(server.id), 'action', `/servers/${server.id}`)
      proxy.rewrite({
        method: 'GET',
        path: '/firewalls',
        body: () => ({
          firewalls: [{ id: 1, name: 'f', labels: {}, rules: {} }],
          meta: { pagination: { next_page: null } },
        }),
      })
      await invalid(() => client.listFirewalls(), 'firewalls[0].rules', '/firewalls')
    })
  })

  it('no request goes out for an id that is not one (NaN, 0, a float)', async () => {
    for (const id of [Number.NaN, 0, -3, 1.5, Number('undefined')]) {
      const error = await failure(client.deleteServer(id))
      assert.equal(error.code, 'INTERNAL_ERROR')
      await failure(client.getServer(id))
      await failure(client.deleteVolume(id))
    }
    assert.equal(stub.requests.length, 0)
  })

  describe(`answers are read up to ${MAX_RESPONSE_BYTES / 1024 / 1024} MiB`, () => {
    it('a body that does not end is PROVIDER_RESPONSE_TOO_LARGE, its connection dropped, never asked again', async () => {
      proxy.rewrite({ method: 'GET', path: '/servers', streamBytes: Infinity })
      const error = await failure(client.listServers())
      assert.equal(error.code, 'PROVIDER_RESPONSE_TOO_LARGE')
      assert.equal(error.data?.limitBytes, MAX_RESPONSE_BYTES)
      assert.equal(error.data?.path, '/servers')
      assert.equal(stub.requests.filter((r) => r.path === '/servers').length, 1, 'not retried')
      for (let i = 0; i < 50 && proxy.abandoned === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
      assert.equal(proxy.abandoned, 1, 'the client stopped reading and closed the connection')
    })

    it('a Content-Length past the limit is refused before the body is read', async () => {
      proxy.rewrite({ method: 'GET', path: '/locations', streamBytes: 64 * MAX_RESPONSE_BYTES, declareLength: true })
      const error = await failure(client.listLocations())
      assert.equal(error.code, 'PROVIDER_RESPONSE_TOO_LARGE')
    })

    it('a body just under the limit is read', async () => {
      const filler = 'x'.repeat(MAX_RESPONSE_BYTES - 64 * 1024)
      proxy.rewrite({ method: 'GET', path: '/locations', body: (b) => ({ ...b, filler }) })
      assert.equal((await client.listLocations()).length, 4)
    })

    it('an oversized create answer is ambiguous: the server is found by its label', async () => {
      proxy.rewrite({ method: 'POST', path: '/servers', streamBytes: 2 * MAX_RESPONSE_BYTES })
      const created = await client.createServer(serverRequest('build-8'))
      assert.equal(created.adopted, true)
      assert.equal(created.server.id, serversOf('build-8')[0]!.id)
      assert.equal(creates().length, 1)
    })
  })
})
