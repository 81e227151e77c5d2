import assert from 'node:assert/strict'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { loadGatewayConfig, parseBind } from '../../../src/gateway/config.js'

// XDG_STATE_HOME set, so the default does not depend on who runs the tests (root's differs).
const base = { HOME: '/home/op', XDG_STATE_HOME: '/home/op/.local/state' }

function refused(env: Record<string, string>, variable: string): void {
  assert.throws(
    () => loadGatewayConfig({ ...base, ...env }),
    (e: unknown) => e instanceof FleetkitError && e.code === 'GATEWAY_CONFIG_INVALID' && e.data?.variable === variable,
  )
}

describe('gateway: configuration from the environment', () => {
  it('has defaults that work on one machine', () => {
    const config = loadGatewayConfig(base)
    assert.deepEqual(config.enrollBind, { host: '127.0.0.1', port: 8444 })
    assert.deepEqual(config.agentBind, { host: '127.0.0.1', port: 8443 })
    assert.deepEqual(config.metricsBind, { host: '127.0.0.1', port: 9464 })
    assert.equal(config.agentCertLifetimeSeconds, 86400)
    assert.equal(config.agentRenewCheckSeconds, 600)
    assert.equal(config.recoveryWindowSeconds, 7 * 86400)
    assert.deepEqual(config.shedDelayThresholdsMs, [150, 500, 2000])
    assert.equal(config.databaseUrl, undefined)
    assert.equal(config.stateDir, '/home/op/.local/state/fleetkit')
    assert.equal(config.pkiDir, '/home/op/.local/state/fleetkit/pki')
  })

  it('reads every variable', () => {
    const config = loadGatewayConfig({
      ...base,
      DATABASE_URL: 'postgres://u:p@db/fleet',
      FLEETKIT_STATE_DIR: '/var/lib/fk',
      FLEETKIT_PKI_DIR: '/etc/fk/pki',
      FLEETKIT_ENROLL_BIND: '0.0.0.0:444',
      FLEETKIT_AGENT_BIND: '[::]:443',
      FLEETKIT_METRICS_BIND: 'localhost:0',
      FLEETKIT_AGENT_CERT_LIFETIME_SECONDS: '3600',
      FLEETKIT_AGENT_RENEW_CHECK_SECONDS: '60',
    })
    assert.equal(config.databaseUrl, 'postgres://u:p@db/fleet')
    assert.equal(config.stateDir, '/var/lib/fk')
    assert.equal(config.pkiDir, '/etc/fk/pki')
    assert.deepEqual(config.enrollBind, { host: '0.0.0.0', port: 444 })
    assert.deepEqual(config.agentBind, { host: '::', port: 443 })
    assert.deepEqual(config.metricsBind, { host: '127.0.0.1', port: 0 })
    assert.equal(config.agentCertLifetimeSeconds, 3600)
    assert.equal(config.agentRenewCheckSeconds, 60)
    assert.deepEqual(
      loadGatewayConfig({ ...base, FLEETKIT_SHED_EVENT_LOOP_DELAY_MS: '100, 300,900' }).shedDelayThresholdsMs,
      [100, 300, 900],
    )
    assert.equal(
      loadGatewayConfig({ ...base, FLEETKIT_SHED_EVENT_LOOP_DELAY_MS: '0' }).shedDelayThresholdsMs,
      undefined,
    )
    assert.equal(loadGatewayConfig(base).sweepLeaseSeconds, 10)
    assert.equal(loadGatewayConfig({ ...base, FLEETKIT_SWEEP_LEASE_SECONDS: '30' }).sweepLeaseSeconds, 30)
  })

  it('refuses bad values with GATEWAY_CONFIG_INVALID naming the variable, never echoing DATABASE_URL', () => {
    refused({ FLEETKIT_AGENT_BIND: 'gateway.example:443' }, 'FLEETKIT_AGENT_BIND')
    refused({ FLEETKIT_ENROLL_BIND: '127.0.0.1' }, 'FLEETKIT_ENROLL_BIND')
    refused({ FLEETKIT_METRICS_BIND: '127.0.0.1:70000' }, 'FLEETKIT_METRICS_BIND')
    refused({ FLEETKIT_AGENT_CERT_LIFETIME_SECONDS: '1h' }, 'FLEETKIT_AGENT_CERT_LIFETIME_SECONDS')
    refused({ FLEETKIT_AGENT_CERT_LIFETIME_SECONDS: '10' }, 'FLEETKIT_AGENT_CERT_LIFETIME_SECONDS')
    refused({ FLEETKIT_AGENT_RENEW_CHECK_SECONDS: '0' }, 'FLEETKIT_AGENT_RENEW_CHECK_SECONDS')
    refused({ FLEETKIT_RECOVERY_WINDOW_SECONDS: '-1' }, 'FLEETKIT_RECOVERY_WINDOW_SECONDS')
    refused({ FLEETKIT_SHED_EVENT_LOOP_DELAY_MS: '500,150,2000' }, 'FLEETKIT_SHED_EVENT_LOOP_DELAY_MS')
    refused({ FLEETKIT_SHED_EVENT_LOOP_DELAY_MS: '150,500' }, 'FLEETKIT_SHED_EVENT_LOOP_DELAY_MS')
    // Shorter than two sweep ticks and a margin: the leader could lose it between its renewals.
    refused({ FLEETKIT_SWEEP_LEASE_SECONDS: '4' }, 'FLEETKIT_SWEEP_LEASE_SECONDS')
    refused({ FLEETKIT_SWEEP_LEASE_SECONDS: '10s' }, 'FLEETKIT_SWEEP_LEASE_SECONDS')
    refused({ FLEETKIT_SHED_EVENT_LOOP_DELAY_MS: '5,10,20' }, 'FLEETKIT_SHED_EVENT_LOOP_DELAY_MS')
    refused({ FLEETKIT_RECOVERY_WINDOW_SECONDS: String(91 * 86400) }, 'FLEETKIT_RECOVERY_WINDOW_SECONDS')
    refused(
      { FLEETKIT_AGENT_CERT_LIFETIME_SECONDS: '600', FLEETKIT_AGENT_RENEW_CHECK_SECONDS: '300' },
      'FLEETKIT_AGENT_RENEW_CHECK_SECONDS',
    )
    try {
      loadGatewayConfig({ ...base, DATABASE_URL: 'mysql://user:hunter2@db/x' })
      assert.fail('accepted a non-postgres URL')
    } catch (error) {
      assert.equal((error as FleetkitError).code, 'GATEWAY_CONFIG_INVALID')
      assert.doesNotMatch((error as Error).message, /hunter2/)
    }
  })

  it('parses IPv4, bracketed IPv6 and localhost', () => {
    assert.deepEqual(parseBind('X', '10.1.2.3:8443'), { host: '10.1.2.3', port: 8443 })
    assert.deepEqual(parseBind('X', '[::1]:1'), { host: '::1', port: 1 })
    assert.throws(() => parseBind('X', '::1:8443'))
  })
})
