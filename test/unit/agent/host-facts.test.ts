import assert from 'node:assert/strict'
import { rm } from 'node:fs/promises'

import { countCpuList, gatherHostFacts, memTotalMb } from '../../../src/agent/host-facts.js'
import { parseMounts } from '../../../src/agent/host.js'
import { HEALTHY_FILES, fakeHost, makeFakeRoot } from '../../support/fake-host.js'

describe('agent host facts', () => {
  const roots: string[] = []
  after(async () => {
    for (const root of roots) await rm(root, { recursive: true, force: true })
  })

  it('parses CPU lists, MemTotal and escaped mount points', () => {
    assert.equal(countCpuList('0-3,6,8-9'), 7)
    assert.equal(countCpuList('0'), 1)
    assert.equal(countCpuList('garbage'), null)
    assert.equal(memTotalMb('MemTotal:        2048000 kB\n'), 2000)
    assert.equal(memTotalMb('nothing'), null)
    assert.deepEqual(parseMounts('/dev/sdb1 /srv/a\\040b xfs rw 0 0\n'), [
      { device: '/dev/sdb1', mountPoint: '/srv/a b', fsType: 'xfs' },
    ])
  })

  it('reads every fact from a fake host root', async () => {
    const root = await makeFakeRoot(HEALTHY_FILES)
    roots.push(root)
    const host = fakeHost(root, { 'docker version --format {{.Server.Version}}': { stdout: '27.3.1\n' } })
    const facts = await gatherHostFacts(host, {
      dataMount: '/srv/fleet data',
      agentVersion: '1.2.3',
      clockSkewMs: -42.4,
    })
    assert.equal(facts.cpu_count, 5)
    assert.equal(facts.memory_mb, 7850)
    assert.equal(facts.kernel, '6.8.0-45-generic')
    assert.equal(facts.docker_version, '27.3.1')
    assert.equal(facts.agent_version, '1.2.3')
    assert.equal(facts.bridge_netfilter, true)
    assert.equal(facts.clock_skew_ms, -42)
    assert.equal(typeof facts.data_disk_free_gb, 'number')
    assert.ok(Number.isInteger(facts.data_disk_free_gb))
  })

  it('falls back to /proc/cpuinfo and reports what it cannot read as null or false', async () => {
    const root = await makeFakeRoot({
      '/proc/cpuinfo': 'processor\t: 0\nmodel name: x\n\nprocessor\t: 1\n',
      '/proc/sys/net/bridge/bridge-nf-call-iptables': '1\n',
      '/proc/sys/net/bridge/bridge-nf-call-ip6tables': '0\n',
    })
    roots.push(root)
    const facts = await gatherHostFacts(fakeHost(root, {}), {
      dataMount: '/nowhere',
      agentVersion: '1.2.3',
      clockSkewMs: undefined,
    })
    assert.equal(facts.cpu_count, 2)
    assert.equal(facts.memory_mb, null)
    assert.equal(facts.kernel, null)
    assert.equal(facts.docker_version, null)
    assert.equal(facts.bridge_netfilter, false)
    assert.equal(facts.data_disk_free_gb, null)
    assert.equal(facts.clock_skew_ms, null)
  })
})
