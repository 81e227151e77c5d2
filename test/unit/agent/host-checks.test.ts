import assert from 'node:assert/strict'
import { rm } from 'node:fs/promises'

import {
  type CheckContext,
  DOCTOR_ONLY_CHECK_IDS,
  HOST_CHECK_IDS,
  runHostChecks,
} from '../../../src/agent/host-checks.js'
import { findCheckEntry, hasOwner, loadCheckIds } from '../../../src/checks/check-ids.js'
import { isFailureCode } from '../../../src/checks/failure-codes.js'
import { HEALTHY_FILES, fakeHost, makeFakeRoot } from '../../support/fake-host.js'

const HOUR = 3_600_000
const now = new Date('2026-03-01T12:00:00Z')
const fresh = { notBefore: new Date(now.getTime() - HOUR), notAfter: new Date(now.getTime() + 23 * HOUR) }

const healthyAnswers = {
  'nft list table inet fleetkit': { stdout: 'table inet fleetkit {\n}\n' },
  'systemctl is-active fleetkit-agent.service': { stdout: 'active\n' },
  'systemctl is-enabled fleetkit-agent.service': { stdout: 'enabled\n' },
}

describe('agent host checks', () => {
  const roots: string[] = []
  after(async () => {
    for (const root of roots) await rm(root, { recursive: true, force: true })
  })

  const context = (
    root: string,
    overrides: Partial<CheckContext> = {},
    answers: object = healthyAnswers,
  ): CheckContext => ({
    host: fakeHost(root, answers as Record<string, object>),
    dataMount: '/srv/fleet data',
    minFreeGb: 0.000001,
    unitName: 'fleetkit-agent.service',
    firewallUnit: 'fleetkit-firewall.service',
    now,
    certificate: fresh,
    clockSkewMs: 120,
    container: false,
    ...overrides,
  })

  it('reports host:br-netfilter not applicable, with no code, on a declared container without bridge sysctls', async () => {
    const root = await makeFakeRoot(
      Object.fromEntries(Object.entries(HEALTHY_FILES).filter(([path]) => !path.startsWith('/proc/sys/net/bridge'))),
    )
    roots.push(root)
    const declared = await runHostChecks(context(root, { container: true }))
    const brnf = declared.find((r) => r.id === 'host:br-netfilter')!
    assert.equal(brnf.status, 'not_applicable')
    assert.equal(brnf.code, undefined)
    assert.match(brnf.detail, /container: true/)
    // Every other check still runs and passes; the same host undeclared fails the kernel check.
    for (const r of declared.filter((r) => r.id !== 'host:br-netfilter')) assert.equal(r.status, 'pass', r.id)
    const undeclared = await runHostChecks(context(root))
    assert.equal(undeclared.find((r) => r.id === 'host:br-netfilter')!.status, 'fail')
    // What the agent sends is what the wire contract reads.
    const { readChecksJobResult } = await import('../../../src/protocol/check-result.js')
    assert.deepEqual(readChecksJobResult({ checks: declared }).checks, declared)
  })

  it('passes every check on a healthy fake host, in the suite order', async () => {
    const root = await makeFakeRoot(HEALTHY_FILES)
    roots.push(root)
    const results = await runHostChecks(context(root))
    assert.deepEqual(
      results.map((r) => r.id),
      [...HOST_CHECK_IDS],
    )
    for (const result of results) assert.equal(result.status, 'pass', `${result.id}: ${result.detail}`)
    assert.ok(results.every((r) => r.code === undefined))
  })

  it('fails each check with its code on a broken fake host', async () => {
    const root = await makeFakeRoot({
      '/proc/sys/net/bridge/bridge-nf-call-iptables': '0\n',
      '/proc/sys/net/bridge/bridge-nf-call-ip6tables': '1\n',
      '/proc/self/mounts': '/dev/sdb1 /srv/fleet\\040data ext4 rw 0 0\n',
      '/srv/fleet data/.keep': '',
    })
    roots.push(root)
    const answers = {
      'nft list table inet fleetkit': { exitCode: 1, stderr: 'Error: No such file or directory\n' },
      'systemctl is-active fleetkit-agent.service': { exitCode: 3, stdout: 'inactive\n' },
      'systemctl is-enabled fleetkit-agent.service': { exitCode: 1, stdout: 'disabled\n' },
    }
    const expired = { notBefore: new Date(now.getTime() - 25 * HOUR), notAfter: new Date(now.getTime() - HOUR) }
    const results = await runHostChecks(
      context(root, { minFreeGb: 1e9, certificate: expired, clockSkewMs: -90_000 }, answers),
    )
    const byId = Object.fromEntries(results.map((r) => [r.id, r]))
    assert.equal(byId['host:br-netfilter']!.code, 'BR_NETFILTER_OFF')
    assert.match(byId['host:br-netfilter']!.detail, /bridge-nf-call-iptables=0/)
    assert.equal(byId['host:data-volume']!.code, 'DATA_VOLUME_NOT_MOUNTED')
    assert.match(byId['host:data-volume']!.detail, /ext4, not xfs/)
    assert.equal(byId['host:firewall']!.code, 'FIREWALL_TABLE_MISSING')
    assert.equal(byId['host:disk-free']!.code, 'DISK_FREE_LOW')
    assert.equal(byId['agent:unit']!.code, 'AGENT_UNIT_INACTIVE')
    assert.equal(byId['agent:certificate']!.code, 'CERTIFICATE_EXPIRED')
    assert.equal(byId['agent:clock-skew']!.code, 'CLOCK_SKEW')
    assert.ok(results.every((r) => r.status === 'fail'))
  })

  it('falls back to the firewall unit when nft is not readable by the agent user', async () => {
    const root = await makeFakeRoot(HEALTHY_FILES)
    roots.push(root)
    const denied = { exitCode: 1, stderr: 'Error: Operation not permitted\n' }
    const up = await runHostChecks(
      context(
        root,
        {},
        {
          ...healthyAnswers,
          'nft list table inet fleetkit': denied,
          'systemctl is-active fleetkit-firewall.service': { stdout: 'active\n' },
        },
      ),
    )
    assert.equal(up.find((r) => r.id === 'host:firewall')!.status, 'pass')
    const down = await runHostChecks(
      context(
        root,
        {},
        {
          ...healthyAnswers,
          'nft list table inet fleetkit': denied,
          'systemctl is-active fleetkit-firewall.service': { exitCode: 3, stdout: 'failed\n' },
        },
      ),
    )
    assert.equal(down.find((r) => r.id === 'host:firewall')!.code, 'FIREWALL_TABLE_MISSING')
  })

  it('reports br_netfilter missing, no mount, a certificate past its renewal point and a missing identity', async () => {
    const root = await makeFakeRoot({ '/proc/self/mounts': '' })
    roots.push(root)
    const late = { notBefore: new Date(now.getTime() - 20 * HOUR), notAfter: new Date(now.getTime() + 4 * HOUR) }
    const byId = Object.fromEntries((await runHostChecks(context(root, { certificate: late }))).map((r) => [r.id, r]))
    assert.match(byId['host:br-netfilter']!.detail, /not loaded/)
    assert.match(byId['host:data-volume']!.detail, /nothing is mounted/)
    assert.deepEqual(
      [byId['agent:certificate']!.status, byId['agent:certificate']!.code],
      ['warn', 'CERTIFICATE_EXPIRING'],
    )
    const none = Object.fromEntries(
      (await runHostChecks(context(root, { certificate: undefined, clockSkewMs: undefined }))).map((r) => [r.id, r]),
    )
    assert.equal(none['agent:certificate']!.code, 'IDENTITY_MISSING')
    assert.equal(none['agent:clock-skew']!.status, 'warn')
  })

  it('reports only check IDs that schema/check-ids.json owns, and only registered codes', async () => {
    const entries = loadCheckIds()
    for (const id of [...HOST_CHECK_IDS, ...DOCTOR_ONLY_CHECK_IDS]) {
      const entry = findCheckEntry(entries, id)
      assert.equal(entry?.id, id, `${id} must be registered exactly`)
      assert.ok(hasOwner(entry), `${id} needs an owner`)
    }
    const root = await makeFakeRoot({})
    roots.push(root)
    for (const result of await runHostChecks(context(root, { minFreeGb: 1e9, certificate: undefined }, {}))) {
      if (result.code !== undefined) assert.ok(isFailureCode(result.code), `${result.code} must be registered`)
    }
  })
})
