// The Hetzner Cloud client against the local stub over real HTTP on loopback: pagination, the rate
// budget (429s honoured on the injected clock), retries of idempotent calls only, the ambiguous
// create found again by its label, every error mapping, and the token in no output.
import assert from 'node:assert/strict'
import { inspect } from 'node:util'

import { type FleetkitError, isFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { errorEnvelope, humanErrorLines } from '../../../src/cli/error-output.js'
import { memoryLogger } from '../../../src/log/logger.js'
import { HetznerClient } from '../../../src/provider/hetzner.js'
import type { HetznerErrorCode } from '../../../src/provider/hetzner-error-codes.js'
import type { HetznerStub } from '../../../src/provider/hetzner-stub.js'
import type { CreateServerRequest } from '../../../src/provider/hetzner-types.js'
import { stubAndClient } from '../../support/hetzner-timeline.js'

function serverRequest(nodeId: string, extra: Partial<CreateServerRequest> = {}): CreateServerRequest {
  return {
    name: nodeId,
    server_type: 'cx22',
    image: 'debian-12',
    location: 'fsn1',
    labels: { 'fleetkit.node_id': nodeId, 'fleetkit.fleet': 'acme', 'fleetkit.pool': 'build' },
    ...extra,
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

function requestsTo(stub: HetznerStub, method: string, path: string) {
  return stub.requests.filter((r) => r.method === method && r.path === path)
}

describe('provider: the Hetzner Cloud client against the stub', () => {
  const stubs: HetznerStub[] = []
  async function setUp(...args: Parameters<typeof stubAndClient>) {
    const made = await stubAndClient(...args)
    stubs.push(made.stub)
    return made
  }
  afterEach(async () => {
    await Promise.all(stubs.splice(0).map((stub) => stub.close()))
  })

  describe('token', () => {
    it('is sent only as the bearer header: the stub accepts it and records no token', async () => {
      const { stub, client } = await setUp()
      await client.listLocations()
      assert.equal(stub.requests.length, 1)
      assert.equal(stub.requests[0]!.authorized, true)
      assert.ok(!JSON.stringify(stub.requests).includes(stub.token))
      assert.ok(!JSON.stringify(stub.requests[0]!.query).includes('token'))
    })

    it('a missing variable is PROVIDER_TOKEN_MISSING naming the variable, the definition’s tokenEnv too', () => {
      assert.throws(() => new HetznerClient({ env: {} }), {
        code: 'PROVIDER_TOKEN_MISSING',
        message: /HETZNER_API_TOKEN/,
      })
      assert.throws(() => new HetznerClient({ env: { HETZNER_API_TOKEN: 'x' }, tokenEnv: 'ACME_HCLOUD' }), {
        code: 'PROVIDER_TOKEN_MISSING',
        message: /ACME_HCLOUD/,
      })
    })

    it('goes over https, or over http only to this machine: http to another host is PROVIDER_ENDPOINT_INSECURE', () => {
      const env = { HETZNER_API_TOKEN: 'hcloudSECRETtoken0123456789' }
      for (const baseUrl of ['http://api.example.net/v1', 'http://10.0.0.5:8080/v1', 'http://[2001:db8::1]/v1']) {
        assert.throws(
          () => new HetznerClient({ env, baseUrl }),
          (error: unknown) =>
            isFleetkitError(error) &&
            error.code === 'PROVIDER_ENDPOINT_INSECURE' &&
            !JSON.stringify(errorEnvelope(error)).includes(env.HETZNER_API_TOKEN),
          baseUrl,
        )
      }
      for (const baseUrl of [
        'https://api.hetzner.cloud/v1',
        'http://127.0.0.1:4010/v1',
        'http://[::1]:4010/v1',
        'http://localhost:4010/v1',
      ])
        assert.doesNotThrow(() => new HetznerClient({ env, baseUrl }), baseUrl)
    })

    it('PROVIDER_ENDPOINT_INSECURE names the fixes (the https URL, the variable) and its runbook once', () => {
      const env = { HETZNER_API_TOKEN: 'hcloudSECRETtoken0123456789' }
      let error: unknown
      assert.throws(
        () => new HetznerClient({ env, baseUrl: 'http://10.1.2.3:8080/v1' }),
        (e: unknown) => ((error = e), true),
      )
      assert.ok(isFleetkitError(error) && error.code === 'PROVIDER_ENDPOINT_INSECURE')
      assert.match(error.actions[0]!, /^fleetkit provider check --api-url https:\/\/10\.1\.2\.3:8080\/v1 /)
      assert.ok(error.actions.some((a) => a.startsWith('unset HETZNER_API_URL')))
      assert.equal(error.actions.filter((a) => a === 'fleetkit runbook PROVIDER_ENDPOINT_INSECURE').length, 1)
    })

    it('a token given where a variable name belongs is refused without echoing it', () => {
      const pasted = 'hcloudTOKENpasted0123456789'
      assert.throws(
        () => new HetznerClient({ env: {}, tokenEnv: pasted }),
        (error: FleetkitError) =>
          error.code === 'USAGE_INVALID' && !JSON.stringify(errorEnvelope(error, 2)).includes(pasted),
      )
    })

    it('an API URL that is not plain http(s) is USAGE_INVALID before any request', () => {
      for (const baseUrl of ['api.hetzner.cloud/v1', 'ftp://x/v1', 'https://user:pw@x/v1']) {
        assert.throws(
          () => new HetznerClient({ env: { HETZNER_API_TOKEN: 't' }, baseUrl }),
          (error: FleetkitError) => error.code === 'USAGE_INVALID' && !error.message.includes('pw'),
        )
      }
    })

    it('reads the definition’s tokenEnv when named', async () => {
      const { stub } = await setUp()
      const client = new HetznerClient({ env: { ACME_HCLOUD: stub.token }, tokenEnv: 'ACME_HCLOUD', baseUrl: stub.url })
      assert.equal((await client.listLocations()).length, 4)
    })

    it('a refused token is PROVIDER_UNAUTHORIZED, and neither it nor the stub’s token reaches any output', async () => {
      const { stub, timeline } = await setUp()
      const wrong = 'hcloud-wrong-token-0123456789abcdef'
      const log = memoryLogger('cli', 'debug')
      const client = new HetznerClient({
        env: { HETZNER_API_TOKEN: wrong },
        baseUrl: stub.url,
        clock: timeline.clock,
        sleep: timeline.sleep,
        log,
      })
      const error = await failure(client.listServers())
      assert.equal(error.code, 'PROVIDER_UNAUTHORIZED')
      assert.equal(error.data?.providerCode, 'unauthorized')
      assert.equal(stub.requests.length, 1, 'a 401 is never retried')
      const printed = [
        error.message,
        JSON.stringify(errorEnvelope(error, error.exitCode)),
        ...humanErrorLines(error, true),
        JSON.stringify(log.lines),
        inspect(client, { depth: 10 }),
        JSON.stringify(client),
        JSON.stringify(stub.requests),
      ].join('\n')
      assert.ok(!printed.includes(wrong), 'the token must not be printed')
    })

    it('no error or debug line of a failing run carries the token (retries, 429s, transport failures)', async () => {
      const log = memoryLogger('cli', 'debug')
      const { stub, client } = await setUp({ retryAfter: true }, { log, requestTimeoutMs: 300 })
      stub.setRateLimit(3600, 0)
      stub.inject({ path: '/servers', kind: 'reset', times: 4 })
      const error = await failure(client.listServers())
      assert.equal(error.code, 'PROVIDER_UNAVAILABLE')
      assert.ok(log.lines.some((line) => line.msg === 'provider_retry'))
      assert.ok(log.lines.some((line) => line.msg === 'provider_request' && line.status === 429))
      assert.ok(log.lines.some((line) => line.msg === 'provider_rate_limited'))
      const printed = [
        error.message,
        JSON.stringify(errorEnvelope(error, 1)),
        ...humanErrorLines(error, true),
        JSON.stringify(log.lines),
      ].join('\n')
      assert.ok(!printed.includes(stub.token))
    })
  })

  describe('pagination', () => {
    it('follows meta.pagination.next_page with per_page 50 until the last page', async () => {
      const { stub, client } = await setUp()
      for (let i = 0; i < 120; i++) {
        stub.api.sshKeys.set(i + 1, {
          id: i + 1,
          name: `key-${i}`,
          fingerprint: `f${i}`,
          public_key: `ssh-ed25519 K${i}`,
          labels: {},
          created: '2026-03-01T12:00:00.000Z',
        })
      }
      const keys = await client.listSshKeys()
      assert.equal(keys.length, 120)
      assert.deepEqual(new Set(keys.map((k) => k.name)).size, 120)
      const pages = requestsTo(stub, 'GET', '/ssh_keys').map((r) => [r.query.page?.[0], r.query.per_page?.[0]])
      assert.deepEqual(pages, [
        ['1', '50'],
        ['2', '50'],
        ['3', '50'],
      ])
    })

    it('passes label selectors and names through', async () => {
      const { client } = await setUp()
      await client.createServer(serverRequest('build-01'))
      await client.createServer(
        serverRequest('build-02', { labels: { 'fleetkit.node_id': 'build-02', 'fleetkit.pool': 'ingress' } }),
      )
      assert.deepEqual(
        (await client.listServers({ labelSelector: 'fleetkit.pool=build' })).map((s) => s.name),
        ['build-01'],
      )
      assert.deepEqual(
        (await client.listServers({ labelSelector: '!fleetkit.fleet' })).map((s) => s.name),
        ['build-02'],
      )
      assert.deepEqual(
        (await client.listServers({ name: 'build-02' })).map((s) => s.name),
        ['build-02'],
      )
    })
  })

  describe('rate budget', () => {
    it('on a 429 with Retry-After, sends nothing more until that time on the injected clock', async () => {
      const { stub, client, timeline } = await setUp({ retryAfter: true })
      stub.setRateLimit(60, 0) // one request a minute refills
      await client.listLocations()
      const [refused, accepted] = requestsTo(stub, 'GET', '/locations')
      assert.equal(refused!.status, 429)
      assert.equal(accepted!.status, 200)
      assert.ok(accepted!.atMs - refused!.atMs >= 60_000, `retried after ${accepted!.atMs - refused!.atMs} ms`)
      assert.ok(timeline.waits.reduce((a, b) => a + b, 0) >= 60_000)
    })

    it('on a 429 without Retry-After (as the real API answers), waits until RateLimit-Reset', async () => {
      const { stub, client } = await setUp({ retryAfter: false }, { maxRateWaitMs: 2 * 3_600_000 })
      stub.setRateLimit(3600, 0)
      await client.listLocations()
      const [refused, accepted] = requestsTo(stub, 'GET', '/locations')
      assert.equal(refused!.status, 429)
      // The stub's reset is when the whole budget is back: an hour at 3,600 an hour from empty.
      assert.ok(
        accepted!.atMs - refused!.atMs >= 3_600_000 - 1000,
        `retried after ${accepted!.atMs - refused!.atMs} ms`,
      )
    })

    it('learns from RateLimit-Remaining: with none left it waits for the refill instead of drawing a 429', async () => {
      const { stub, client, timeline } = await setUp()
      stub.setRateLimit(3600, 1)
      await client.listLocations()
      await client.listServerTypes()
      assert.deepEqual(
        stub.requests.map((r) => r.status),
        [200, 200],
      )
      assert.ok(timeline.waits.length > 0 && timeline.waits.every((ms) => ms > 0 && ms <= 1000), String(timeline.waits))
    })

    it('a wait longer than maxRateWaitMs is PROVIDER_RATE_LIMITED, after one refused request', async () => {
      const { stub, client } = await setUp({}, { maxRateWaitMs: 60_000 })
      stub.setRateLimit(3600, 0)
      const error = await failure(client.listLocations())
      assert.equal(error.code, 'PROVIDER_RATE_LIMITED')
      assert.equal(stub.requests.length, 1)
    })

    it('shares one budget between clients: a second client of the same budget waits too', async () => {
      const { stub, timeline } = await setUp()
      const { memoryRateBudget } = await import('../../../src/provider/rate-budget.js')
      const budget = memoryRateBudget()
      const make = () =>
        new HetznerClient({
          env: { HETZNER_API_TOKEN: stub.token },
          baseUrl: stub.url,
          clock: timeline.clock,
          sleep: timeline.sleep,
          budget,
        })
      stub.setRateLimit(3600, 1)
      await make().listLocations()
      await make().listLocations()
      assert.deepEqual(
        stub.requests.map((r) => r.status),
        [200, 200],
      )
      assert.ok(timeline.waits.length > 0)
    })
  })

  describe('retries', () => {
    it('retries a GET on 5xx with jittered, growing backoff and succeeds', async () => {
      const { stub, client, timeline } = await setUp()
      stub.inject({ path: '/server_types', kind: 'status', status: 503, times: 2 })
      assert.equal((await client.listServerTypes()).length > 0, true)
      assert.deepEqual(
        requestsTo(stub, 'GET', '/server_types').map((r) => r.status),
        [503, 503, 200],
      )
      assert.equal(timeline.waits.length, 2)
      assert.ok(timeline.waits[0]! >= 250 && timeline.waits[0]! <= 500, String(timeline.waits))
      assert.ok(timeline.waits[1]! >= 500 && timeline.waits[1]! <= 1000, String(timeline.waits))
    })

    it('gives up after 4 attempts: PROVIDER_UNAVAILABLE', async () => {
      const { stub, client } = await setUp()
      stub.inject({ path: '/servers', kind: 'status', status: 500, code: 'server_error', times: 10 })
      const error = await failure(client.getServer(1))
      assert.equal(error.code, 'PROVIDER_UNAVAILABLE')
      assert.equal(stub.requests.length, 4)
    })

    it('retries transport failures of idempotent calls (a dropped connection, a DELETE)', async () => {
      const { stub, client } = await setUp()
      const created = await client.createServer(serverRequest('build-01'))
      stub.inject({ method: 'DELETE', path: '/servers/', kind: 'reset', times: 1 })
      const action = await client.deleteServer(created.server.id)
      assert.equal(action?.command, 'delete_server')
      assert.equal(requestsTo(stub, 'DELETE', `/servers/${created.server.id}`).length, 2)
      assert.equal(await client.deleteServer(created.server.id), undefined, 'deleting again finds it gone')
    })

    it('retries set_rules (idempotent) but not a create of an SSH key', async () => {
      const { stub, client } = await setUp()
      const { firewall } = await client.createFirewall({ name: 'fleetkit-build' })
      stub.inject({ path: /set_rules$/, kind: 'status', status: 502, code: 'server_error' })
      await client.setFirewallRules(firewall.id, [
        { direction: 'in', protocol: 'tcp', port: '22', source_ips: ['192.0.2.0/24'] },
      ])
      assert.equal(requestsTo(stub, 'POST', `/firewalls/${firewall.id}/actions/set_rules`).length, 2)
      assert.equal(stub.api.firewalls.get(firewall.id)!.rules.length, 1)

      stub.inject({ path: '/ssh_keys', kind: 'status', status: 503 })
      const error = await failure(client.createSshKey({ name: 'ops', public_key: 'ssh-ed25519 AAAA ops' }))
      assert.equal(error.code, 'PROVIDER_UNAVAILABLE')
      assert.equal(requestsTo(stub, 'POST', '/ssh_keys').length, 1)
    })
  })

  describe('server creation', () => {
    it('creates once with labels, firewall, placement group, SSH keys and user_data as sent', async () => {
      const { stub, client } = await setUp()
      const key = await client.createSshKey({ name: 'ops', public_key: 'ssh-ed25519 AAAA ops' })
      const { firewall } = await client.createFirewall({ name: 'fleetkit-build' })
      const group = await client.createPlacementGroup({ name: 'build' })
      const result = await client.createServer(
        serverRequest('build-01', {
          ssh_keys: [key.id],
          firewalls: [{ firewall: firewall.id }],
          placement_group: group.id,
          user_data: '#cloud-config\n',
        }),
      )
      assert.equal(result.adopted, false)
      assert.equal(result.action?.command, 'create_server')
      assert.equal(result.server.labels['fleetkit.node_id'], 'build-01')
      const [sent] = requestsTo(stub, 'POST', '/servers')
      assert.deepEqual((sent!.body as { firewalls: unknown }).firewalls, [{ firewall: firewall.id }])
      assert.equal(stub.api.servers.size, 1)
    })

    for (const [fault, label] of [
      [{ kind: 'hang', afterEffect: true }, 'times out after the server exists'],
      [{ kind: 'status', status: 504, code: 'timeout', afterEffect: true }, 'answers 504 after the server exists'],
      [{ kind: 'reset', afterEffect: true }, 'drops the connection after the server exists'],
    ] as const) {
      it(`a create that ${label} is not sent again: the server is found by its fleetkit.node_id label`, async () => {
        const { stub, client } = await setUp({}, { requestTimeoutMs: 200 })
        stub.inject({ method: 'POST', path: '/servers', ...fault })
        const result = await client.createServer(serverRequest('build-01'))
        assert.equal(result.adopted, true)
        assert.equal(result.server.name, 'build-01')
        assert.equal(requestsTo(stub, 'POST', '/servers').length, 1, 'never re-POSTed')
        assert.equal(stub.api.servers.size, 1)
        const lookup = requestsTo(stub, 'GET', '/servers')
        assert.deepEqual(lookup[0]!.query.label_selector, ['fleetkit.node_id=build-01'])
      })
    }

    it('a create answered 201 with a body that is not JSON is looked up too, not sent again', async () => {
      let mangled = false
      const mangle: typeof fetch = async (input, init) => {
        const response = await fetch(input, init)
        if (init?.method !== 'POST' || mangled) return response
        mangled = true
        return new Response('<html>proxy</html>', { status: 201, headers: response.headers })
      }
      const { stub, client } = await setUp({}, { fetch: mangle })
      const result = await client.createServer(serverRequest('build-01'))
      assert.equal(result.adopted, true)
      assert.equal(requestsTo(stub, 'POST', '/servers').length, 1)
      assert.equal(stub.api.servers.size, 1)
    })

    it('an ambiguous failure that created nothing is thrown (one POST, one lookup, no server)', async () => {
      const { stub, client } = await setUp()
      stub.inject({ method: 'POST', path: '/servers', kind: 'status', status: 503 })
      const error = await failure(client.createServer(serverRequest('build-01')))
      assert.equal(error.code, 'PROVIDER_UNAVAILABLE')
      assert.equal(error.data?.ambiguous, true)
      assert.equal(requestsTo(stub, 'POST', '/servers').length, 1)
      assert.equal(requestsTo(stub, 'GET', '/servers').length, 1)
      assert.equal(stub.api.servers.size, 0)
    })

    it('a name held by a server without our label is PROVIDER_NAME_CONFLICT, never adopted', async () => {
      const { stub, client } = await setUp()
      await client.createServer(serverRequest('build-01', { labels: { 'fleetkit.node_id': 'someone-else' } }))
      const error = await failure(client.createServer(serverRequest('build-01')))
      assert.equal(error.code, 'PROVIDER_NAME_CONFLICT')
      assert.deepEqual(error.data?.fields, ['name'])
      assert.equal(stub.api.servers.size, 1)
    })

    it('a name held by our own node (a create replayed after a crash) is adopted', async () => {
      const { client } = await setUp()
      const first = await client.createServer(serverRequest('build-01'))
      const again = await client.createServer(serverRequest('build-01'))
      assert.equal(again.adopted, true)
      assert.equal(again.server.id, first.server.id)
    })
  })

  describe('error mapping', () => {
    it('resource_limit_exceeded is PROVIDER_QUOTA_EXCEEDED naming the limit', async () => {
      const { stub, client } = await setUp()
      stub.api.quota.servers = 0
      const error = await failure(client.createServer(serverRequest('build-01')))
      assert.equal(error.code, 'PROVIDER_QUOTA_EXCEEDED')
      assert.equal(error.data?.status, 403)
      assert.deepEqual(error.data?.fields, ['server_limit'])
      assert.match(String(error.data?.correlationId), /^[0-9a-f]+$/)
    })

    it('resource_unavailable is PROVIDER_TYPE_UNAVAILABLE', async () => {
      const { stub, client } = await setUp()
      stub.api.unavailable.add('cx22@fsn1')
      const error = await failure(client.createServer(serverRequest('build-01')))
      assert.equal(error.code, 'PROVIDER_TYPE_UNAVAILABLE')
      assert.equal(error.data?.status, 412)
      assert.equal(requestsTo(stub, 'GET', '/servers').length, 0, 'a refusal is not ambiguous: no lookup')
    })

    it('user_data over 32 KiB is PROVIDER_INPUT_INVALID naming user_data', async () => {
      const { client } = await setUp()
      const error = await failure(client.createServer(serverRequest('build-01', { user_data: 'x'.repeat(32_769) })))
      assert.equal(error.code, 'PROVIDER_INPUT_INVALID')
      assert.deepEqual(error.data?.fields, ['user_data'])
    })

    const injected: [number, HetznerErrorCode, string][] = [
      [403, 'forbidden', 'PROVIDER_UNAUTHORIZED'],
      [401, 'token_readonly', 'PROVIDER_UNAUTHORIZED'],
      [403, 'maintenance', 'PROVIDER_UNAVAILABLE'],
      [400, 'json_error', 'PROVIDER_INPUT_INVALID'],
      [423, 'locked', 'PROVIDER_ERROR'],
      [409, 'conflict', 'PROVIDER_ERROR'],
    ]
    for (const [status, code, expected] of injected) {
      it(`${status} ${code} is ${expected}, not retried, with the provider's code in data`, async () => {
        const { stub, client } = await setUp()
        stub.inject({ path: '/locations', kind: 'status', status, code })
        const error = await failure(client.listLocations())
        assert.equal(error.code, expected)
        assert.equal(error.data?.providerCode, code)
        assert.match(error.message, new RegExp(code))
        assert.equal(stub.requests.length, 1)
      })
    }
  })

  describe('actions', () => {
    it('polls many actions in one batched call per round until they finish on the clock', async () => {
      const { stub, client } = await setUp({ actionDurationMs: 5000 })
      const created = await Promise.all(
        ['build-01', 'build-02', 'build-03'].map((id) => client.createServer(serverRequest(id))),
      )
      const ids = created.flatMap((c) => [c.action!.id, ...c.next_actions.map((a) => a.id)])
      const done = await client.waitForActions(ids, { pollMs: 1000 })
      assert.deepEqual(
        done.map((a) => a.status),
        Array(6).fill('success'),
      )
      const polls = requestsTo(stub, 'GET', '/actions')
      assert.ok(polls.length <= 6, `${polls.length} polls`)
      assert.deepEqual(polls[0]!.query.id, ids.map(String))
      const servers = await client.listServers()
      assert.deepEqual(
        servers.map((s) => s.status),
        ['running', 'running', 'running'],
      )
    })

    it('asks for at most 25 actions a call', async () => {
      const { stub, client } = await setUp()
      await client.getActions(Array.from({ length: 30 }, (_, i) => i + 1))
      assert.deepEqual(
        requestsTo(stub, 'GET', '/actions').map((r) => r.query.id?.length),
        [25, 5],
      )
    })

    it('an action that ends in error is PROVIDER_ACTION_FAILED', async () => {
      const { stub, client } = await setUp()
      const created = await client.createServer(serverRequest('build-01'))
      const action = stub.api.actions.get(created.action!.id)!.action
      action.status = 'error'
      action.error = { code: 'action_failed', message: 'boot failed' }
      const error = await failure(client.waitForActions([action.id]))
      assert.equal(error.code, 'PROVIDER_ACTION_FAILED')
      assert.equal(error.data?.providerCode, 'action_failed')
    })
  })
})
