// The one mapping from the rendered inventory's fleetkit_* variables to the roles' inputs
// (ansible/playbooks/vars/roles.yml), evaluated by real Ansible against the golden inventory of
// the example fleet: what site.yml hands each role for a node with and without a data volume.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { packagePath } from '../../../src/package-root.js'
import { overlayEnv, runProcessOk } from '../../support/process.js'

const INPUTS = [
  'preflight_host_policy',
  'data_volume_device',
  'data_volume_mount_point',
  'docker_enabled',
  'docker_network_enabled',
  'docker_network_default_address_pools',
  'docker_network_bip',
  'tailscale_enabled',
  'tailscale_tags',
  'tailscale_hostname',
  'agent_update_url',
  'agent_update_version',
  'agent_update_public_key',
  'agent_node_id',
  'agent_gateway_url',
  'agent_enroll_url',
  'agent_data_mount',
]

describe('render: the inventory mapped to role inputs (ansible/playbooks/vars/roles.yml)', function () {
  this.timeout(120_000)
  let dir: string
  let inputs: Record<string, Record<string, unknown>>

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleetkit-role-inputs-'))
    // Nothing connects: every task is a debug on the controller, delegated per host.
    const play = [
      {
        name: 'Show the role inputs',
        hosts: 'all',
        gather_facts: false,
        connection: 'local',
        vars_files: [packagePath('ansible', 'playbooks', 'vars', 'roles.yml')],
        tasks: [
          {
            name: 'Show them',
            'ansible.builtin.debug': { msg: `{{ {${INPUTS.map((v) => `'${v}': ${v}`).join(', ')}} | to_json }}` },
          },
        ],
      },
    ]
    writeFileSync(join(dir, 'play.yml'), JSON.stringify(play))
    const { stdout } = await runProcessOk(
      'ansible-playbook',
      ['-i', packagePath('test', 'golden', 'inventory.yml'), join(dir, 'play.yml')],
      {
        env: overlayEnv({ ANSIBLE_STDOUT_CALLBACK: 'json', ANSIBLE_CONFIG: packagePath('ansible', 'ansible.cfg') }),
      },
    )
    const result = JSON.parse(stdout) as { plays: Array<{ tasks: Array<{ hosts: Record<string, { msg: string }> }> }> }
    inputs = Object.fromEntries(
      Object.entries(result.plays[0]!.tasks[0]!.hosts).map(([host, r]) => [
        host,
        JSON.parse(r.msg) as Record<string, unknown>,
      ]),
    )
  })

  after(() => rmSync(dir, { recursive: true, force: true }))

  it('a node with a data volume and a docker network policy gets both, and the agent waits for the mount', () => {
    const build1 = inputs['build-1']!
    assert.equal(build1.data_volume_device, '/dev/sdb')
    assert.equal(build1.data_volume_mount_point, '/srv/build')
    assert.equal(build1.agent_data_mount, '/srv/build')
    assert.equal(build1.docker_enabled, true)
    assert.equal(build1.docker_network_enabled, true)
    assert.deepEqual(build1.docker_network_default_address_pools, [{ base: '10.210.0.0/16', size: 24 }])
    assert.equal(build1.agent_node_id, 'build-1')
    assert.deepEqual(build1.tailscale_tags, ['tag:fleetkit-build'])
    assert.equal(build1.tailscale_enabled, false)
    assert.equal((build1.preflight_host_policy as { version: number }).version, 1)
    assert.match(String(build1.agent_update_url), /^https:\/\//)
  })

  it('a node without a data volume gets an empty device (the role does nothing) and no mount for the agent', () => {
    const app = Object.entries(inputs).find(([, v]) => v.data_volume_device === '')
    assert.ok(app, 'no node without a data volume in the example fleet')
    assert.equal(app[1].agent_data_mount, '')
  })

  it('Docker Engine follows features.containers: installed where it is on, removed where it is off', () => {
    const off = Object.entries(inputs).filter(([, v]) => v.docker_enabled === false)
    assert.ok(off.length > 0, 'no node with containers off in the example fleet')
    for (const [, v] of off) assert.equal(v.docker_network_enabled, false)
  })
})
