// The one logger: the same fields for every process, FLEETKIT_LOG_LEVEL, routine traffic at
// debug, and secret-named fields redacted before a line is written.
import assert from 'node:assert/strict'

import { requestLogLevel } from '../../../src/gateway/routes/request-handler.js'
import { createLogger, logEnabled, logLevelFromEnv, silentLogger } from '../../../src/log/logger.js'

const AT = new Date('2026-01-01T00:00:00Z')

function capture(options: { component?: 'gateway' | 'agent' | 'cli'; env?: Record<string, string> } = {}) {
  const lines: string[] = []
  const log = createLogger({
    component: options.component ?? 'agent',
    env: options.env ?? {},
    now: () => AT,
    destination: {
      write: (line) => {
        lines.push(line)
      },
    },
  })
  return { log, lines, parsed: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) }
}

describe('logger', () => {
  it('writes one JSON object per line with time, level, component and msg', () => {
    const { log, lines } = capture({ component: 'gateway' })
    log('info', 'enrolled', { node_id: 'n1' })
    assert.deepEqual(lines, [
      '{"level":"info","time":"2026-01-01T00:00:00.000Z","component":"gateway","node_id":"n1","msg":"enrolled"}\n',
    ])
  })

  it('gives the gateway and the agent the same field names', () => {
    const gateway = capture({ component: 'gateway' })
    const agent = capture({ component: 'agent' })
    gateway.log('warn', 'x', { a: 1 })
    agent.log('warn', 'x', { a: 1 })
    assert.deepEqual(Object.keys(gateway.parsed()[0]!), Object.keys(agent.parsed()[0]!))
  })

  it('writes info and above by default and debug only when FLEETKIT_LOG_LEVEL asks', () => {
    const quiet = capture()
    quiet.log('debug', 'heartbeat')
    quiet.log('info', 'agent_started')
    assert.deepEqual(
      quiet.parsed().map((l) => l.msg),
      ['agent_started'],
    )
    const loud = capture({ env: { FLEETKIT_LOG_LEVEL: 'debug' } })
    loud.log('debug', 'heartbeat')
    assert.deepEqual(
      loud.parsed().map((l) => [l.level, l.msg]),
      [['debug', 'heartbeat']],
    )
    const errorsOnly = capture({ env: { FLEETKIT_LOG_LEVEL: 'ERROR' } })
    errorsOnly.log('warn', 'w')
    errorsOnly.log('error', 'e')
    assert.deepEqual(
      errorsOnly.parsed().map((l) => l.msg),
      ['e'],
    )
  })

  it('warns once about an unknown level and keeps logging at info', () => {
    assert.deepEqual(logLevelFromEnv({ FLEETKIT_LOG_LEVEL: 'loud' }), { level: 'info', invalid: 'loud' })
    const { log, parsed } = capture({ env: { FLEETKIT_LOG_LEVEL: 'loud' } })
    log('debug', 'hidden')
    log('info', 'shown')
    assert.deepEqual(
      parsed().map((l) => [l.level, l.msg, l.given]),
      [
        ['warn', 'log_level_invalid', 'loud'],
        ['info', 'shown', undefined],
      ],
    )
  })

  it('redacts secret-named fields at the top level and one level down', () => {
    const { log, lines } = capture()
    log('error', 'oops', {
      secret: 's3cr3t-value',
      token: 'tok-value',
      data: { key: 'k3y-value', password: 'pw-value', node_id: 'n1' },
    })
    const text = lines.join('')
    for (const value of ['s3cr3t-value', 'tok-value', 'k3y-value', 'pw-value'])
      assert.doesNotMatch(text, new RegExp(value))
    assert.match(text, /"node_id":"n1"/)
    assert.match(text, /"secret":"\[redacted\]"/)
  })

  it("logs the gateway's routine agent traffic at debug, refusals at info, 503 (the database, logged once at error) at warn, failures at error", () => {
    assert.equal(requestLogLevel('/v1/agent/heartbeat', 200), 'debug')
    assert.equal(requestLogLevel('/v1/agent/lease', 200), 'debug')
    assert.equal(requestLogLevel('/v1/agent/jobs/:id/heartbeat', 200), 'debug')
    assert.equal(requestLogLevel('/v1/agent/heartbeat', 401), 'info')
    assert.equal(requestLogLevel('/v1/enroll', 200), 'info')
    assert.equal(requestLogLevel('/v1/agent/lease', 503), 'warn')
    assert.equal(requestLogLevel('/v1/agent/lease', 500), 'error')
    // Shed requests come in floods: debug (the shedder logs each change of level once).
    assert.equal(requestLogLevel('/v1/agent/heartbeat', 503, 'GATEWAY_OVERLOADED'), 'debug')
    assert.equal(requestLogLevel('/v1/enroll', 503, 'GATEWAY_OVERLOADED'), 'debug')
  })

  it('says which levels it writes, so a hot path skips building a line nobody reads', () => {
    const log = createLogger({ component: 'gateway', level: 'info', destination: { write: () => {} } })
    assert.equal(logEnabled(log, 'debug'), false)
    assert.equal(logEnabled(log, 'info'), true)
    assert.equal(logEnabled(silentLogger, 'error'), false)
    // A plain function without `enabled` (a test's own logger) is assumed to write everything.
    assert.equal(
      logEnabled(() => {}, 'debug'),
      true,
    )
  })
})
