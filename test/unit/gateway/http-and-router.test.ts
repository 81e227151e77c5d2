import assert from 'node:assert/strict'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { errorReply, PreparedJson, withServerTime } from '../../../src/gateway/routes/http.js'
import { Router } from '../../../src/gateway/routes/router.js'

describe('gateway: router', () => {
  const handler = async () => ({})
  const router = new Router([
    { method: 'POST', pattern: '/v1/agent/jobs/:id/complete', auth: 'mark', handler },
    { method: 'GET', pattern: '/healthz', auth: 'none', handler },
  ])

  it('matches method and pattern and extracts parameters', () => {
    const m = router.match('POST', '/v1/agent/jobs/0b7c9a52-7f0e-4a55-9d1f-3f4a8e1c2b3d/complete')
    assert.equal(m?.route.pattern, '/v1/agent/jobs/:id/complete')
    assert.deepEqual(m?.params, { id: '0b7c9a52-7f0e-4a55-9d1f-3f4a8e1c2b3d' })
  })

  it('does not match another method, extra segments or an empty parameter', () => {
    assert.equal(router.match('GET', '/v1/agent/jobs/x/complete'), undefined)
    assert.equal(router.match('POST', '/v1/agent/jobs//complete'), undefined)
    assert.equal(router.match('POST', '/v1/agent/jobs/a/b/complete'), undefined)
    assert.equal(router.match('GET', '/healthz/'), undefined)
  })

  it('finds a route without parameters by its path, and keeps first-match order when an earlier pattern also matches', () => {
    assert.equal(router.match('GET', '/healthz')?.route.pattern, '/healthz')
    assert.deepEqual(router.match('GET', '/healthz')?.params, {})
    assert.equal(router.match('POST', '/healthz'), undefined)
    assert.equal(router.match(undefined, '/healthz'), undefined)
    const ordered = new Router([
      { method: 'GET', pattern: '/v1/things/:id', auth: 'none', handler },
      { method: 'GET', pattern: '/v1/things/all', auth: 'none', handler },
      { method: 'POST', pattern: '/v1/things/all', auth: 'none', handler },
    ])
    assert.deepEqual(ordered.match('GET', '/v1/things/all'), {
      route: ordered.match('GET', '/v1/things/x')!.route,
      params: { id: 'all' },
    })
    assert.equal(ordered.match('POST', '/v1/things/all')?.route.pattern, '/v1/things/all')
  })
})

describe('gateway: malformed requests are refused before authentication', () => {
  const handler = async () => ({})
  const router = new Router([
    { method: 'POST', pattern: '/v1/agent/jobs/:id/complete', auth: 'mark', handler },
    { method: 'GET', pattern: '/healthz', auth: 'none', handler },
  ])
  const refusal = (method: string, path: string) => {
    try {
      router.resolve(method, path, 'agent')
    } catch (error) {
      return errorReply(error)
    }
    return undefined
  }

  it('answers 405 with Allow for a known path with another method, 404 for an unknown path', () => {
    const wrong = refusal('PUT', '/v1/agent/jobs/x/complete')
    assert.equal(wrong?.status, 405)
    assert.deepEqual(wrong?.headers, { allow: 'POST' })
    assert.equal(wrong?.body.error && (wrong.body.error as { code: string }).code, 'method_not_allowed')
    assert.equal(refusal('GET', '/nope')?.status, 404)
  })

  it('answers 400 (not a 500) for a malformed percent-escape in a path parameter', () => {
    const bad = refusal('POST', '/v1/agent/jobs/%zz/complete')
    assert.equal(bad?.status, 400)
    assert.equal((bad?.body.error as { code: string }).code, 'request_invalid')
    assert.equal(router.resolve('POST', '/v1/agent/jobs/a%2Fb/complete', 'agent').params.id, 'a/b')
  })
})

describe('gateway: error replies', () => {
  it('maps refusal codes to HTTP statuses with the code in lower case and extra body fields', () => {
    const r = errorReply(new FleetkitError('NODE_LOST', 'lost', { data: { body: { cleanup: [] } } }))
    assert.equal(r.status, 403)
    assert.deepEqual(r.body, { cleanup: [], error: { code: 'node_lost', message: 'lost' } })
    assert.equal(errorReply(new FleetkitError('LEASE_CONFLICT', 'x')).status, 409)
    assert.equal(errorReply(new FleetkitError('ENROLLMENT_REFUSED', 'x')).status, 401)
    const limited = errorReply(new FleetkitError('RATE_LIMITED', 'slow down', { data: { retryAfterSeconds: 7 } }))
    assert.equal(limited.status, 429)
    assert.deepEqual(limited.headers, { 'retry-after': '7' })
  })

  it('hides the message of anything unexpected behind a 500', () => {
    const r = errorReply(new Error('connect ECONNREFUSED postgres://u:secret@db'))
    assert.equal(r.status, 500)
    assert.doesNotMatch(JSON.stringify(r.body), /secret/)
    assert.equal((r.body.error as { code: string }).code, 'internal_error')
  })
})

describe('gateway: server_time on every answer', () => {
  const at = (ms: number) => new Date(Date.UTC(2026, 11, 1, 12, 0, 0, ms))

  it('adds server_time last to any body, an empty one included, as the spread copy did', () => {
    const body = { node_status: 'active', renewal_due: true, nested: { a: [1, '}'] } }
    assert.equal(withServerTime(body, at(5)), JSON.stringify({ ...body, server_time: at(5).toISOString() }))
    assert.deepEqual(JSON.parse(withServerTime({}, at(5))), { server_time: '2026-12-01T12:00:00.005Z' })
    assert.deepEqual(JSON.parse(withServerTime({ server_time: 'forged', x: 1 }, at(5))), {
      server_time: '2026-12-01T12:00:00.005Z',
      x: 1,
    })
  })

  it('sends a prepared answer exactly as the object it was made from, and refuses one that names server_time', () => {
    for (const body of [{ node_status: 'active', trust_bundle_sha256: 'ab'.repeat(32) }, {}, { a: '}' }]) {
      const prepared = new PreparedJson(body)
      for (const ms of [5, 6]) assert.equal(withServerTime(prepared, at(ms)), withServerTime(body, at(ms)))
    }
    assert.throws(() => new PreparedJson({ server_time: 'forged' }), /server_time/)
  })

  it('gives each millisecond its own time, also when calls alternate between two', () => {
    for (const ms of [7, 7, 8, 7, 999])
      assert.equal(JSON.parse(withServerTime({}, at(ms))).server_time, at(ms).toISOString())
  })
})
