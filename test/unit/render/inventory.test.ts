import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'

import { parse } from 'yaml'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import type { Definition } from '../../../src/definition/types.js'
import { packagePath } from '../../../src/package-root.js'
import { renderInventory } from '../../../src/render/inventory.js'

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPdRl3VEfS8Ir661qc0rFEACHmzWcHU6RE3gIZhMM3sS'

function definition(): Definition {
  return {
    version: 1,
    fleet: 'test',
    gateway: { url: 'https://g.example:8443', enrollUrl: 'https://g.example:8444' },
    release: { url: 'https://r.example/agent', publicKey: Buffer.alloc(32).toString('base64'), version: '1.0.0' },
    operators: { cidrs: ['192.0.2.0/24'], sshKeys: [] },
    features: { containers: true, session: 'headless' },
    exposure: { publicSsh: false, otherListeners: 'fail' },
    pools: {
      'web-tier': {
        role: 'web',
        ingress: true,
        capacityBudget: { cpu: 8, memoryMiB: 8192, diskGiB: 100 },
        exposure: { otherListeners: 'warn' },
        features: { preset: 'p' },
      },
      db: { role: 'database', capacityBudget: { cpu: 8, memoryMiB: 8192, diskGiB: 100 } },
    },
    nodes: [
      {
        id: 'web-1',
        pool: 'web-tier',
        state: 'active',
        region: 'fsn1',
        ssh: { host: 'web-1.example', user: 'ops', port: 2222 },
        hostKey: `${KEY} comment`,
        exposure: { publicSsh: true },
      },
      { id: 'yes', pool: 'db', state: 'active', ssh: { host: '192.0.2.5' } },
      { id: 'db-2', pool: 'db', state: 'disabled' },
    ],
    canary: 'web-1',
  }
}

describe('render: inventory', () => {
  it('groups hosts by pool, region, role and canary, with Ansible-safe group names', () => {
    const out = renderInventory({
      definition: definition(),
      stateNodes: [],
      hostPolicy: { version: 1 },
      knownHostsPath: '/k/known_hosts',
    })
    const doc = parse(out.yaml, { version: '1.1' }) as {
      all: { children: Record<string, { hosts: Record<string, null> }> }
    }
    const groups = Object.fromEntries(Object.entries(doc.all.children).map(([g, v]) => [g, Object.keys(v.hosts)]))
    assert.deepEqual(groups, {
      canary: ['web-1'],
      pool_db: ['db-2', 'yes'],
      pool_web_tier: ['web-1'],
      region_fsn1: ['web-1'],
      role_database: ['db-2', 'yes'],
      role_web: ['web-1'],
    })
    assert.deepEqual(out.groups, Object.keys(groups))
  })

  it('sets SSH vars with a pinned known_hosts and strict checking, and merges exposure node > pool > fleet', () => {
    const out = renderInventory({
      definition: definition(),
      stateNodes: [],
      hostPolicy: { version: 1 },
      knownHostsPath: '/k/known_hosts',
    })
    const doc = parse(out.yaml, { version: '1.1' }) as {
      all: { hosts: Record<string, Record<string, unknown>>; vars: Record<string, unknown> }
    }
    const web = doc.all.hosts['web-1']!
    assert.equal(web.ansible_host, 'web-1.example')
    assert.equal(web.ansible_user, 'ops')
    assert.equal(web.ansible_port, 2222)
    assert.equal(
      web.ansible_ssh_common_args,
      '-o UserKnownHostsFile=/k/known_hosts -o StrictHostKeyChecking=yes -o HostKeyAlias=web-1',
    )
    assert.deepEqual(web.fleetkit_exposure, { publicSsh: true, otherListeners: 'warn' })
    assert.deepEqual(web.fleetkit_features, { containers: true, session: 'headless', preset: 'p' })
    assert.equal(out.knownHosts, `web-1 ${KEY}\n`)
    assert.deepEqual(out.unpinned, ['db-2', 'yes'])
    assert.deepEqual(doc.all.vars.fleetkit_host_policy, { version: 1 })
    // A node id YAML 1.1 reads as a boolean stays a string for Ansible.
    assert.match(out.yaml, /^ {4}"yes":$/m)
  })

  it("what a converge depends on leaves out the node's lifecycle status (sync's own enrollment changes it), nothing else", () => {
    const render = (status: string, host = 'web-1.example') => {
      const def = definition()
      def.nodes[0]!.ssh = { ...def.nodes[0]!.ssh!, host }
      return renderInventory({
        definition: def,
        stateNodes: [{ id: 'web-1', pool: 'web-tier', status, hostKeyPublic: null }],
        hostPolicy: { version: 1 },
        knownHostsPath: '/k/known_hosts',
      })
    }
    const provisioning = render('provisioning')
    const active = render('active')
    assert.notEqual(provisioning.yaml, active.yaml)
    assert.match(active.yaml, /fleetkit_status: active/)
    assert.equal(provisioning.convergeInputs, active.convergeInputs)
    assert.doesNotMatch(active.convergeInputs, /fleetkit_status/)
    assert.notEqual(render('active', 'web-1.other').convergeInputs, active.convergeInputs)
  })

  it("a node's own agentVersion (the canary running ahead) reaches the agent_update role; others get null", async () => {
    const def = definition()
    def.nodes[0]!.agentVersion = '1.1.0'
    const out = renderInventory({
      definition: def,
      stateNodes: [],
      hostPolicy: { version: 1 },
      knownHostsPath: '/k/known_hosts',
    })
    const doc = parse(out.yaml, { version: '1.1' }) as { all: { hosts: Record<string, Record<string, unknown>> } }
    assert.equal(doc.all.hosts['web-1']!.fleetkit_agent_version, '1.1.0')
    assert.equal(doc.all.hosts['yes']!.fleetkit_agent_version, null)
    const { readFileSync } = await import('node:fs')
    const { packagePath } = await import('../../../src/package-root.js')
    const roles = readFileSync(packagePath('ansible', 'playbooks', 'vars', 'roles.yml'), 'utf8')
    assert.match(
      roles,
      /^agent_update_version: "\{\{ fleetkit_agent_version \| default\(fleetkit_release\.version, true\) \}\}"$/m,
    )
  })

  it("carries a node's container declaration as fleetkit_container (false when undeclared), and roles.yml hands it to preflight", async () => {
    const def = definition()
    def.nodes[0]!.container = true
    const out = renderInventory({
      definition: def,
      stateNodes: [{ id: 'from-state', pool: def.nodes[0]!.pool, status: 'active' }],
      hostPolicy: { version: 1 },
      knownHostsPath: '/k/known_hosts',
    })
    const doc = parse(out.yaml, { version: '1.1' }) as { all: { hosts: Record<string, Record<string, unknown>> } }
    assert.equal(doc.all.hosts['web-1']!.fleetkit_container, true)
    assert.equal(doc.all.hosts['yes']!.fleetkit_container, false)
    assert.equal(doc.all.hosts['from-state']!.fleetkit_container, false)
    // A converge depends on it: the fingerprint of a node that becomes a container changes.
    assert.match(out.convergeInputs, /fleetkit_container: true/)
    const { readFileSync } = await import('node:fs')
    const { packagePath } = await import('../../../src/package-root.js')
    const roles = readFileSync(packagePath('ansible', 'playbooks', 'vars', 'roles.yml'), 'utf8')
    assert.match(roles, /^preflight_container: "\{\{ fleetkit_container \| default\(false\) \}\}"$/m)
  })

  it('adds provisioned nodes from the state and leaves out parked and retired ones', () => {
    const out = renderInventory({
      definition: definition(),
      stateNodes: [
        { id: 'web-1', pool: 'web-tier', status: 'retired' },
        { id: 'db-2', pool: 'db', status: 'parked' },
        { id: 'web-9', pool: 'web-tier', region: 'nbg1', status: 'active', sshHost: '192.0.2.9', hostKeyPublic: KEY },
        { id: 'yes', pool: 'db', status: 'lost' },
      ],
      hostPolicy: {},
      knownHostsPath: '/k/known_hosts',
    })
    assert.deepEqual(out.hosts, ['web-9', 'yes'])
    assert.deepEqual(out.excluded, ['db-2', 'web-1'])
    assert.equal(out.knownHosts, `web-9 ${KEY}\n`)
    assert.ok(!out.groups.includes('canary'))
  })

  it('is deterministic whatever the input order', () => {
    const a = definition()
    const b = definition()
    b.nodes.reverse()
    const render = (d: Definition) =>
      renderInventory({ definition: d, stateNodes: [], hostPolicy: {}, knownHostsPath: '/k/known_hosts' }).yaml
    assert.equal(render(a), render(b))
  })

  it("carries a private release mirror's CA for agent_update, and refuses one that is not PEM certificates", () => {
    const ca = readFileSync(packagePath('test', 'fixtures', 'cloud-init', 'gateway-ca-bundle.pem'), 'utf8')
    const input = { definition: definition(), stateNodes: [], hostPolicy: {}, knownHostsPath: '/k/known_hosts' }
    const release = (yaml: string) =>
      (parse(yaml, { version: '1.1' }) as { all: { vars: { fleetkit_release: Record<string, string> } } }).all.vars
        .fleetkit_release
    assert.equal(release(renderInventory(input).yaml).caPem, undefined)
    assert.equal(release(renderInventory({ ...input, releaseCaPem: `${ca}\n\n` }).yaml).caPem, ca.trim() + '\n')
    assert.throws(
      () =>
        renderInventory({
          ...input,
          releaseCaPem: `${ca}-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n`,
        }),
      (e: unknown) => e instanceof FleetkitError && e.code === 'SEED_VALUE_INVALID',
    )
  })

  it('refuses a host key, host or path that is not plain', () => {
    const bad = (mutate: (d: Definition) => void, path = '/k/known_hosts') => {
      const d = definition()
      mutate(d)
      assert.throws(
        () => renderInventory({ definition: d, stateNodes: [], hostPolicy: {}, knownHostsPath: path }),
        (e: unknown) => e instanceof FleetkitError && e.code === 'SEED_VALUE_INVALID',
      )
    }
    bad((d) => {
      d.nodes[0]!.hostKey = `${KEY}\nevil ssh-ed25519 AAAA`
    })
    bad((d) => {
      d.nodes[0]!.ssh!.host = 'web-1 -oProxyCommand=id'
    })
    bad(() => undefined, '/k/known hosts')
    bad(() => undefined, 'relative/known_hosts')
  })

  it('refuses a node whose key in the state disagrees with its declared hostKey (HOST_KEY_DISAGREES); a different comment is the same key', () => {
    const other = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG2Q22lHQ13gZYC5FVnWPStE92sbGmybChHe5Pl573we web-1'
    const render = (hostKeyPublic: string) =>
      renderInventory({
        definition: definition(),
        stateNodes: [{ id: 'web-1', pool: 'web-tier', status: 'active', hostKeyPublic }],
        hostPolicy: {},
        knownHostsPath: '/k/known_hosts',
      })
    assert.throws(
      () => render(other),
      (e: unknown) =>
        e instanceof FleetkitError && e.code === 'HOST_KEY_DISAGREES' && (e.data as { node: string }).node === 'web-1',
    )
    assert.ok(render(`${KEY} web-1`).knownHosts.includes(`web-1 ${KEY}\n`))
  })
})
