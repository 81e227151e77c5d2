// The local Hetzner Cloud stub's own behaviours, over plain HTTP: the public API's field names and
// error bodies, the RateLimit headers, actions on the injected clock, faults, and the request record.
import assert from 'node:assert/strict'

import { fixedClock } from '../../../src/config/clock.js'
import { type HetznerStub, startHetznerStub } from '../../../src/provider/hetzner-stub.js'

describe('provider: the Hetzner Cloud stub', () => {
  const clock = fixedClock(new Date('2026-03-01T12:00:00Z'))
  let stub: HetznerStub

  async function call(method: string, path: string, body?: unknown, token = stub.token) {
    const response = await fetch(`${stub.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON read field by field; the asserts check its shape
    return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, any> }
  }

  const server = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    server_type: 'cx22',
    image: 'debian-12',
    location: 'fsn1',
    labels: { 'fleetkit.node_id': name },
    ...extra,
  })

  beforeEach(async () => {
    stub = await startHetznerStub({ clock, actionDurationMs: 3000 })
  })
  afterEach(async () => {
    await stub.close()
  })

  it('refuses another token with the API’s 401 body', async () => {
    const answer = await call('GET', '/servers', undefined, 'nope')
    assert.equal(answer.status, 401)
    assert.deepEqual(answer.body, { error: { code: 'unauthorized', message: 'unable to authenticate', details: {} } })
  })

  it('records every request with its body and query, never the token', async () => {
    await call('POST', '/servers', server('a', { user_data: '#cloud-config\n' }))
    await call('GET', '/servers?label_selector=fleetkit.node_id%3Da')
    assert.deepEqual(
      stub.requests.map((r) => [r.method, r.path, r.status]),
      [
        ['POST', '/servers', 201],
        ['GET', '/servers', 200],
      ],
    )
    assert.deepEqual(stub.requests[1]!.query, { label_selector: ['fleetkit.node_id=a'] })
    assert.equal((stub.requests[0]!.body as { user_data: string }).user_data, '#cloud-config\n')
    assert.ok(!JSON.stringify(stub.requests).includes(stub.token))
  })

  it('creates a server as the API answers: server, create_server action, start_server next, root_password null with keys', async () => {
    await call('POST', '/ssh_keys', { name: 'ops', public_key: 'ssh-ed25519 AAAA ops' })
    const answer = await call('POST', '/servers', server('a', { ssh_keys: ['ops'] }))
    assert.equal(answer.status, 201)
    assert.equal(answer.body.server.status, 'initializing')
    assert.equal(answer.body.server.server_type.name, 'cx22')
    assert.equal(answer.body.server.datacenter.location.name, 'fsn1')
    assert.equal(answer.body.action.command, 'create_server')
    assert.equal(answer.body.next_actions[0].command, 'start_server')
    assert.equal(answer.body.root_password, null)
  })

  it('actions finish after their delay on the clock, and the server runs then', async () => {
    const created = await call('POST', '/servers', server('a'))
    const id = created.body.action.id
    assert.equal((await call('GET', `/actions?id=${id}`)).body.actions[0].status, 'running')
    clock.advance(2999)
    assert.equal((await call('GET', `/actions/${id}`)).body.action.status, 'running')
    clock.advance(1)
    const done = (await call('GET', `/actions?id=${id}&id=${created.body.next_actions[0].id}`)).body.actions
    assert.deepEqual(
      done.map((a: { status: string; progress: number }) => [a.status, a.progress]),
      [
        ['success', 100],
        ['success', 100],
      ],
    )
    assert.equal((await call('GET', `/servers/${created.body.server.id}`)).body.server.status, 'running')
  })

  it('filters by label selector (k=v, k, !k) and name, and paginates with meta.pagination', async () => {
    for (let i = 0; i < 30; i++) {
      await call(
        'POST',
        '/servers',
        server(`n${i}`, { labels: i % 2 ? { pool: 'build' } : { pool: 'ingress', edge: '' } }),
      )
    }
    assert.equal((await call('GET', '/servers?label_selector=pool%3Dbuild&per_page=50')).body.servers.length, 15)
    assert.equal((await call('GET', '/servers?label_selector=edge&per_page=50')).body.servers.length, 15)
    assert.equal((await call('GET', '/servers?label_selector=!edge&per_page=50')).body.servers.length, 15)
    assert.equal((await call('GET', '/servers?name=n3')).body.servers[0].name, 'n3')
    const first = await call('GET', '/servers')
    assert.equal(first.body.servers.length, 25)
    assert.deepEqual(first.body.meta.pagination, {
      page: 1,
      per_page: 25,
      previous_page: null,
      next_page: 2,
      last_page: 2,
      total_entries: 30,
    })
    const second = await call('GET', '/servers?page=2')
    assert.equal(second.body.servers.length, 5)
    assert.equal(second.body.meta.pagination.next_page, null)
    assert.equal((await call('GET', '/servers?label_selector=a%20b')).body.error.code, 'invalid_input')
  })

  it('sends the RateLimit headers and, with the budget spent, the real 429 body', async () => {
    const ok = await call('GET', '/locations')
    assert.equal(ok.headers.get('ratelimit-limit'), '3600')
    assert.equal(ok.headers.get('ratelimit-remaining'), '3599')
    assert.equal(Number(ok.headers.get('ratelimit-reset')), Math.ceil(clock.now().getTime() / 1000) + 1)
    stub.setRateLimit(10, 0)
    const refused = await call('GET', '/locations')
    assert.equal(refused.status, 429)
    assert.equal(refused.body.error.code, 'rate_limit_exceeded')
    assert.deepEqual(refused.body.error.details, {})
    assert.equal(typeof refused.body.error.message, 'string')
    assert.equal(refused.headers.get('ratelimit-remaining'), '0')
    assert.equal(refused.headers.get('retry-after'), null, 'the real API sends none')
    clock.advance(360_000) // one request back at 10 an hour
    assert.equal((await call('GET', '/locations')).status, 200)
  })

  it('refuses user_data over 32,768 bytes (invalid_input) and accepts exactly that much', async () => {
    const over = await call('POST', '/servers', server('a', { user_data: 'x'.repeat(32_769) }))
    assert.equal(over.status, 422)
    assert.equal(over.body.error.code, 'invalid_input')
    assert.equal(over.body.error.details.fields[0].name, 'user_data')
    assert.equal((await call('POST', '/servers', server('a', { user_data: 'x'.repeat(32_768) }))).status, 201)
  })

  it('answers uniqueness_error, resource_limit_exceeded and resource_unavailable with the API’s bodies', async () => {
    await call('POST', '/servers', server('a'))
    const duplicate = await call('POST', '/servers', server('a'))
    assert.equal(duplicate.status, 409)
    assert.deepEqual(duplicate.body.error.details, { fields: [{ name: 'name' }] })
    assert.equal(duplicate.body.error.code, 'uniqueness_error')

    stub.api.unavailable.add('cx22@nbg1')
    const soldOut = await call('POST', '/servers', server('b', { location: 'nbg1' }))
    assert.equal(soldOut.status, 412)
    assert.deepEqual(soldOut.body.error, {
      code: 'resource_unavailable',
      message: 'error during placement',
      details: {},
    })
    assert.equal((await call('POST', '/servers', server('b', { server_type: 'cx22', location: 'ash' }))).status, 412)

    stub.api.quota.servers = 1
    const quota = await call('POST', '/servers', server('c'))
    assert.equal(quota.status, 403)
    assert.equal(quota.body.error.code, 'resource_limit_exceeded')
    assert.deepEqual(quota.body.error.details, { limits: [{ name: 'server_limit' }] })
  })

  it('injects a fault after the effect: the create that times out has made its server', async () => {
    stub.inject({ method: 'POST', path: '/servers', kind: 'hang', afterEffect: true })
    const controller = new AbortController()
    const hung = fetch(`${stub.url}/servers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stub.token}` },
      body: JSON.stringify(server('a')),
      signal: controller.signal,
    })
    // No answer comes; the server exists as soon as the stub recorded the request.
    while (stub.api.servers.size === 0) await new Promise((resolve) => setImmediate(resolve))
    controller.abort()
    await assert.rejects(hung)
    assert.equal((await call('GET', '/servers')).body.servers.length, 1)
    stub.inject({ path: '/locations', kind: 'status', status: 503, times: 2 })
    assert.equal((await call('GET', '/locations')).body.error.code, 'unavailable')
    assert.equal((await call('GET', '/locations')).status, 503)
    assert.equal((await call('GET', '/locations')).status, 200)
  })

  it('firewalls: create with rules, set_rules replaces them, apply_to_resources attaches', async () => {
    const created = await call('POST', '/firewalls', {
      name: 'fleetkit-build',
      rules: [{ direction: 'in', protocol: 'tcp', port: '22', source_ips: ['192.0.2.0/24'] }],
    })
    assert.equal(created.status, 201)
    const id = created.body.firewall.id
    await call('POST', `/firewalls/${id}/actions/set_rules`, { rules: [] })
    assert.deepEqual(stub.api.firewalls.get(id)!.rules, [])
    const bad = await call('POST', `/firewalls/${id}/actions/set_rules`, {
      rules: [{ direction: 'in', protocol: 'icmp', port: '22' }],
    })
    assert.equal(bad.body.error.code, 'invalid_input')
    const target = [{ type: 'label_selector', label_selector: { selector: 'fleetkit.pool=build' } }]
    assert.equal((await call('POST', `/firewalls/${id}/actions/apply_to_resources`, { apply_to: target })).status, 201)
    assert.equal((await call('POST', `/firewalls/${id}/actions/apply_to_resources`, { apply_to: target })).status, 422)
  })

  it('a port in use is PROVIDER_STUB_BIND_FAILED', async () => {
    await assert.rejects(startHetznerStub({ port: stub.port }), { code: 'PROVIDER_STUB_BIND_FAILED' })
  })
})
