import assert from 'node:assert/strict'

import { parseArgv } from '../../../src/agent/argv.js'
import { loadAgentConfig, parseEnvFile, requireSettings } from '../../../src/agent/config.js'
import type { FleetkitError } from '../../../src/checks/fleetkit-error.js'

const ENV_FILE = `# written by the seed
FLEETKIT_NODE_ID=0b6c3f52-7d4e-4a57-9a44-0f2f0c6b1e11
FLEETKIT_ENROLL_URL="https://gw.example:8444/"
export FLEETKIT_GATEWAY_URL='https://gw.example:8443'
FLEETKIT_AGENT_RENEW_CHECK_SECONDS=600
`

describe('agent configuration', () => {
  it('parses agent.env lines with comments, quotes and export', () => {
    const values = parseEnvFile(ENV_FILE)
    assert.equal(values.FLEETKIT_ENROLL_URL, 'https://gw.example:8444/')
    assert.equal(values.FLEETKIT_GATEWAY_URL, 'https://gw.example:8443')
  })

  it('takes flags over the environment over agent.env over defaults', () => {
    const config = loadAgentConfig({
      env: { FLEETKIT_AGENT_RENEW_CHECK_SECONDS: '5', FLEETKIT_AGENT_PKI_DIR: '/env/pki' },
      flags: { config: '/etc/x.env', 'pki-dir': '/flag/pki' },
      readFile: (path) => {
        assert.equal(path, '/etc/x.env')
        return ENV_FILE
      },
    })
    assert.equal(config.nodeId, '0b6c3f52-7d4e-4a57-9a44-0f2f0c6b1e11')
    assert.equal(config.enrollUrl, 'https://gw.example:8444')
    assert.equal(config.renewCheckSeconds, 5)
    assert.equal(config.pkiDir, '/flag/pki')
    assert.equal(config.secretFile, '/var/lib/fleetkit/enrollment-secret')
  })

  it('refuses an http URL, a bad number and a node ID that is not safe as a CN (AGENT_CONFIG_INVALID)', () => {
    const load = (env: Record<string, string>) => () => loadAgentConfig({ env, flags: {}, readFile: () => '' })
    const invalid = (e: FleetkitError) => e.code === 'AGENT_CONFIG_INVALID'
    assert.throws(load({ FLEETKIT_GATEWAY_URL: 'http://gw:8443' }), invalid)
    assert.throws(load({ FLEETKIT_AGENT_HEARTBEAT_SECONDS: 'soon' }), invalid)
    assert.throws(load({ FLEETKIT_NODE_ID: 'a,CN=evil' }), invalid)
    const config = loadAgentConfig({ env: {}, flags: {}, readFile: () => '' })
    assert.throws(
      () => requireSettings(config, ['nodeId']),
      (e: FleetkitError) => e.code === 'AGENT_CONFIG_INVALID' && /FLEETKIT_NODE_ID is not set/.test(e.message),
    )
  })

  it('reads FLEETKIT_CONTAINER as true or false (false when absent, as in an older agent.env) and refuses anything else', () => {
    const load = (text: string, env: Record<string, string> = {}) =>
      loadAgentConfig({ env, flags: {}, readFile: () => text }).container
    assert.equal(load(ENV_FILE), false)
    assert.equal(load(`${ENV_FILE}FLEETKIT_CONTAINER=true\n`), true)
    assert.equal(load(`${ENV_FILE}FLEETKIT_CONTAINER=false\n`), false)
    assert.equal(load(`${ENV_FILE}FLEETKIT_CONTAINER=\n`), false)
    for (const value of ['yes', '1', 'TRUE'])
      assert.throws(
        () => load(`FLEETKIT_CONTAINER=${value}\n`),
        (e: FleetkitError) =>
          e.code === 'AGENT_CONFIG_INVALID' && /FLEETKIT_CONTAINER must be true or false/.test(e.message),
      )
  })

  it('reports an explicit config file that cannot be read', () => {
    assert.throws(
      () =>
        loadAgentConfig({
          env: { FLEETKIT_AGENT_CONFIG: '/nope/agent.env' },
          flags: {},
          readFile: () => {
            throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' })
          },
        }),
      (e: FleetkitError) => e.code === 'AGENT_CONFIG_INVALID',
    )
  })

  it('parses argv: one command, --flag value, --flag=value, booleans, and refuses unknown flags', () => {
    const parsed = parseArgv(
      ['run', '--pki-dir', '/p', '--node-id=n1', '--version'],
      new Set(['version']),
      new Set(['pki-dir', 'node-id']),
    )
    assert.equal(parsed.command, 'run')
    assert.deepEqual(parsed.flags, { 'pki-dir': '/p', 'node-id': 'n1' })
    assert.ok(parsed.booleans.has('version'))
    assert.throws(
      () => parseArgv(['run', '--bogus'], new Set(), new Set()),
      (e: FleetkitError) => e.code === 'USAGE_INVALID',
    )
    assert.throws(
      () => parseArgv(['run', '--pki-dir'], new Set(), new Set(['pki-dir'])),
      (e: FleetkitError) => e.code === 'USAGE_INVALID',
    )
    assert.throws(
      () => parseArgv(['run', 'extra'], new Set(), new Set()),
      (e: FleetkitError) => e.code === 'USAGE_INVALID',
    )
  })
})
