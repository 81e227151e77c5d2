// The address rule (src/render/node-address.ts): a node fleetkit provisioned is reached at its server's
// recorded address (IPv4, else the ::1 of its IPv6 /64); a fleet.yaml ssh.host that differs is
// NODE_ADDRESS_DISAGREES and nothing is written; a node of a pool with a provider with neither is left
// out naming `fleetkit node provision`. The inventory, sync's SSH targets and node show read it alike.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { parse } from 'yaml'

import { type FleetkitError, isFleetkitError } from '../../../src/checks/fleetkit-error.js'
import type { Definition } from '../../../src/definition/types.js'
import { writeInventory } from '../../../src/lifecycle/seed/inventory-files.js'
import { type InventoryStateNode, renderInventory } from '../../../src/render/inventory.js'
import {
  ipv6HostAddress,
  nodeAddress,
  provisionedAddress,
  unprovisionedStep,
} from '../../../src/render/node-address.js'
import { sshTargets } from '../../../src/sync/ssh-targets.js'
import { validDefinition } from '../../support/definition-fixture.js'

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG2Q22lHQ13gZYC5FVnWPStE92sbGmybChHe5Pl573we app-1'

/** The fixture fleet (pools build and database have a provider) with app-1 declared in build, without ssh.host. */
function fleet(ssh: { host?: string; user: string } = { user: 'fleetkit' }): Definition {
  const d = validDefinition()
  d.nodes.push({ id: 'app-1', pool: 'build', state: 'active', ssh })
  return d
}

/** app-1 as `node provision` leaves it once its server runs. */
function provisioned(overrides: Partial<InventoryStateNode> = {}): InventoryStateNode {
  return {
    id: 'app-1',
    pool: 'build',
    region: 'fsn1',
    status: 'provisioning',
    provisionState: 'awaiting_enrollment',
    provider: 'hetzner',
    providerServerId: '1004',
    publicIpv4: '198.18.3.236',
    publicIpv6: '2001:db8:4::',
    hostKeyPublic: KEY,
    sshHost: null,
    ...overrides,
  }
}

function render(definition: Definition, stateNodes: InventoryStateNode[]) {
  const out = renderInventory({ definition, stateNodes, hostPolicy: {}, knownHostsPath: '/k/known_hosts' })
  const doc = parse(out.yaml, { version: '1.1' }) as { all: { hosts: Record<string, Record<string, unknown>> } }
  return { out, hosts: doc.all.hosts }
}

function thrown(fn: () => unknown): FleetkitError {
  try {
    fn()
  } catch (error) {
    assert.ok(isFleetkitError(error), String(error))
    return error
  }
  assert.fail('expected a FleetkitError')
}

describe('render: the SSH address of a node (node-address.ts)', () => {
  describe('the provisioned address', () => {
    it('is the recorded public IPv4, else the ::1 of the recorded IPv6 /64; none before the server runs', () => {
      assert.equal(provisionedAddress(provisioned()), '198.18.3.236')
      assert.equal(provisionedAddress(provisioned({ publicIpv4: null })), '2001:db8:4::1')
      assert.equal(provisionedAddress(provisioned({ publicIpv4: null, publicIpv6: null })), null)
      // Asked for, not running: no server id or no address recorded yet.
      assert.equal(provisionedAddress(provisioned({ providerServerId: null })), null)
      // A node fleetkit did not provision has no provisioned address, whatever columns it holds.
      assert.equal(provisionedAddress(provisioned({ provider: null })), null)
      assert.equal(provisionedAddress(undefined), null)
    })

    it('an IPv6 host address is taken as it is; a /64 network means its ::1; spellings are canonical', () => {
      assert.equal(ipv6HostAddress('2a01:4f8:c010:1031::'), '2a01:4f8:c010:1031::1')
      assert.equal(ipv6HostAddress('2A01:04F8:C010:1031:0:0:0:0'), '2a01:4f8:c010:1031::1')
      assert.equal(ipv6HostAddress('2a01:4f8:c010:1031::7'), '2a01:4f8:c010:1031::7')
      assert.equal(ipv6HostAddress('2a01:4f8::1:0:0:0'), '2a01:4f8:0:0:1::')
    })
  })

  describe('the rule', () => {
    it('a provisioned node without ssh.host is reached at its server', () => {
      assert.deepEqual(nodeAddress(fleet(), 'app-1', fleet().nodes.at(-1), provisioned()), {
        host: '198.18.3.236',
        source: 'provisioned',
      })
    })

    it('an ssh.host that agrees is accepted, however it is spelt', () => {
      for (const host of ['198.18.3.236', '198.18.3.236.']) {
        const d = fleet({ host, user: 'fleetkit' })
        assert.equal(nodeAddress(d, 'app-1', d.nodes.at(-1), provisioned()).host, '198.18.3.236')
      }
      const d = fleet({ host: '2001:DB8:4:0::1', user: 'fleetkit' })
      assert.deepEqual(nodeAddress(d, 'app-1', d.nodes.at(-1), provisioned({ publicIpv4: null })), {
        host: '2001:db8:4::1',
        source: 'provisioned',
      })
    })

    it('an ssh.host that disagrees is NODE_ADDRESS_DISAGREES naming both addresses and what to do', () => {
      const d = fleet({ host: '192.0.2.11', user: 'fleetkit' })
      const error = thrown(() => nodeAddress(d, 'app-1', d.nodes.at(-1), provisioned()))
      assert.equal(error.code, 'NODE_ADDRESS_DISAGREES')
      assert.match(error.message, /ssh\.host 192\.0\.2\.11/)
      assert.match(error.message, /server 1004 at 198\.18\.3\.236/)
      assert.match(error.message, /Remove ssh\.host from app-1 in fleet\.yaml .*or set it to 198\.18\.3\.236/)
      assert.deepEqual(error.data, {
        node: 'app-1',
        declared: '192.0.2.11',
        provisioned: '198.18.3.236',
        serverId: '1004',
      })
      assert.ok(error.actions.some((a) => a.includes('fleetkit node show app-1')))
    })

    it('a node of a pool with a provider that has no server yet and no ssh.host is unprovisioned', () => {
      const d = fleet()
      assert.deepEqual(nodeAddress(d, 'app-1', d.nodes.at(-1), undefined), { host: null, source: 'unprovisioned' })
      assert.deepEqual(unprovisionedStep('app-1', undefined), {
        reason: 'not provisioned yet (a pool with a provider, no ssh.host)',
        action: 'fleetkit node provision app-1',
      })
      assert.equal(
        unprovisionedStep('app-1', { provisionState: 'pending' }).action,
        'fleetkit node provision --resume app-1',
      )
      // Declared with ssh.host and never provisioned (a host seeded by hand): its declared address.
      const seeded = fleet({ host: '10.1.0.44', user: 'fleetkit' })
      assert.deepEqual(nodeAddress(seeded, 'app-1', seeded.nodes.at(-1), undefined), {
        host: '10.1.0.44',
        source: 'declared',
      })
    })

    it('a pool has a provider when providers.hetzner is declared and the pool names its image', () => {
      const d = fleet()
      delete d.pools.build!.image
      assert.equal(nodeAddress(d, 'app-1', d.nodes.at(-1), undefined).source, 'none')
      const e = fleet()
      delete e.providers
      assert.equal(nodeAddress(e, 'app-1', e.nodes.at(-1), undefined).source, 'none')
    })
  })

  describe('fleetkit inventory', () => {
    it('writes the provisioned address as ansible_host and pins the key node provision stored in the state', () => {
      const { out, hosts } = render(fleet(), [provisioned()])
      assert.equal(hosts['app-1']?.ansible_host, '198.18.3.236')
      assert.ok(out.knownHosts.includes(`app-1 ${KEY.split(' ').slice(0, 2).join(' ')}\n`))
      assert.ok(!out.unpinned.includes('app-1'))
      // IPv6 only: the server's ::1.
      assert.equal(render(fleet(), [provisioned({ publicIpv4: null })]).hosts['app-1']?.ansible_host, '2001:db8:4::1')
    })

    it('leaves out a node of a pool with a provider that is not provisioned, naming node provision', () => {
      const { out, hosts } = render(fleet(), [])
      assert.equal(hosts['app-1'], undefined)
      assert.ok(!out.hosts.includes('app-1'))
      assert.deepEqual(out.unprovisioned, [
        {
          node: 'app-1',
          reason: 'not provisioned yet (a pool with a provider, no ssh.host)',
          action: 'fleetkit node provision app-1',
        },
      ])
      // The other nodes are written as before.
      assert.deepEqual(out.hosts, ['build-1', 'db-1'])
    })

    it('refuses the whole inventory on a disagreement, and writes no file', async () => {
      const d = fleet({ host: '192.0.2.11', user: 'fleetkit' })
      d.example = true
      assert.equal(thrown(() => render(d, [provisioned()])).code, 'NODE_ADDRESS_DISAGREES')
      const dir = await mkdtemp(join(tmpdir(), 'fleetkit-address-'))
      try {
        const output = join(dir, 'ansible', 'inventory.yml')
        await assert.rejects(
          writeInventory({ definition: d, outputPath: output, env: {}, stateNodes: [provisioned()] }),
          (e: unknown) => isFleetkitError(e) && e.code === 'NODE_ADDRESS_DISAGREES',
        )
        assert.equal(existsSync(output), false)
        assert.deepEqual(await readdir(dir), [], 'neither the inventory nor known_hosts was written')
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    })
  })

  it("sync's SSH targets dial the address the inventory gives Ansible", () => {
    const d = fleet()
    const rows = [provisioned({ status: 'active', provisionState: 'enrolled' })]
    const targets = sshTargets(d, rows as Parameters<typeof sshTargets>[1], ['app-1', 'build-1'])
    assert.equal(targets.get('app-1')?.host, '198.18.3.236')
    assert.equal(targets.get('app-1')?.user, 'fleetkit')
    assert.equal(targets.get('app-1')?.pinnedKey, KEY.split(' ').slice(0, 2).join(' '))
    assert.equal(targets.get('build-1')?.host, '10.1.0.11')
    assert.equal(render(d, rows).hosts['app-1']?.ansible_host, targets.get('app-1')?.host)
  })
})
