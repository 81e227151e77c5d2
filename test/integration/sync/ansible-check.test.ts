import assert from 'node:assert/strict'
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { loadHostPolicy } from '../../../src/definition/host-policy.js'
import { loadDefinition } from '../../../src/definition/load.js'
import type { Definition } from '../../../src/definition/types.js'
import { packagePath } from '../../../src/package-root.js'
import { assertAnsibleValid, checkAnsible } from '../../../src/sync/ansible-check.js'
import { renderInventory } from '../../../src/render/inventory.js'
import { assertMatchesOutputSchema, runFleetkit } from '../../support/cli.js'
import { overlayEnv, runProcessOk } from '../../support/process.js'

describe('render: validate --ansible checks (real ansible)', function () {
  this.timeout(120_000)
  let definition: Definition

  before(async () => {
    definition = await loadDefinition(packagePath('examples', 'fleet.yaml'))
  })

  it('ansible-inventory --list reads the rendered example inventory with every host and group', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetkit-inv-'))
    try {
      const rendered = renderInventory({
        definition,
        // build-2 declares no ssh.host (fleetkit provisioned it): its address is its server's, from the state.
        stateNodes: [
          {
            id: 'build-2',
            pool: 'build',
            status: 'draining',
            provider: 'hetzner',
            providerServerId: '4702',
            publicIpv4: '192.0.2.12',
          },
        ],
        hostPolicy: loadHostPolicy(),
        knownHostsPath: join(dir, 'known_hosts'),
      })
      writeFileSync(join(dir, 'inventory.yml'), rendered.yaml)
      const { stdout } = await runProcessOk('ansible-inventory', ['-i', join(dir, 'inventory.yml'), '--list'], {
        env: overlayEnv({ ANSIBLE_INVENTORY_UNPARSED_FAILED: 'true', ANSIBLE_INVENTORY_ENABLED: 'yaml' }),
      })
      const listed = JSON.parse(stdout) as Record<string, { hosts?: string[] }> & {
        _meta: { hostvars: Record<string, Record<string, unknown>> }
      }
      assert.deepEqual(Object.keys(listed._meta.hostvars).sort(), rendered.hosts)
      assert.deepEqual(listed.canary?.hosts, ['build-1'])
      assert.deepEqual(listed.pool_build?.hosts, ['build-1', 'build-2', 'build-3'])
      assert.equal(listed._meta.hostvars['build-2']?.ansible_host, '192.0.2.12')
      const app2 = listed._meta.hostvars['app-2']!
      assert.equal(app2.ansible_port, 2222)
      assert.match(String(app2.ansible_ssh_common_args), /StrictHostKeyChecking=yes/)
      assert.equal((app2.fleetkit_host_policy as { version: number }).version, 1)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("passes fleetkit's own playbooks in one ansible-playbook process", async () => {
    const result = await checkAnsible({ definition, hostPolicy: loadHostPolicy() })
    assert.deepEqual(result.findings, [])
    assert.equal(result.syntaxCheckRuns, 1)
    assert.deepEqual(result.playbooks, [
      'ansible/playbooks/fingerprint.yml',
      'ansible/playbooks/firewall.yml',
      'ansible/playbooks/preflight.yml',
      'ansible/playbooks/site.yml',
      'ansible/playbooks/update-agent.yml',
    ])
  })

  it('reports exactly the two broken playbooks out of six, each with its code and check ID', async () => {
    const result = await checkAnsible({
      definition,
      hostPolicy: loadHostPolicy(),
      playbookDir: packagePath('test', 'fixtures', 'ansible', 'two-broken'),
    })
    assert.equal(result.playbooks.length, 6)
    assert.equal(result.findings.length, 2)
    assert.deepEqual(result.findings.map((f) => [f.code, f.check, f.path]).sort(), [
      ['ANSIBLE_PLAYBOOK_INVALID', 'definition:playbooks', 'test/fixtures/ansible/two-broken/broken-keyword.yml'],
      ['ANSIBLE_PLAYBOOK_INVALID', 'definition:playbooks', 'test/fixtures/ansible/two-broken/broken-yaml.yml'],
    ])
    for (const f of result.findings) assert.ok(f.message.length > 0 && !f.message.includes('\n'))
  })

  it('fails validate --ansible with one error carrying every finding', async () => {
    const dir = packagePath('test', 'fixtures', 'ansible', 'two-broken')
    await assert.rejects(assertAnsibleValid(definition, loadHostPolicy(), process.env, dir), (error: unknown) => {
      assert.ok(error instanceof FleetkitError)
      assert.equal(error.code, 'ANSIBLE_PLAYBOOK_INVALID')
      assert.equal((error.data?.findings as unknown[]).length, 2)
      assert.equal(error.detailLines.length, 2)
      assert.match(
        error.detailLines[0]!,
        /^ANSIBLE_PLAYBOOK_INVALID definition:playbooks test\/fixtures\/ansible\/two-broken\/broken-/,
      )
      return true
    })
  })

  it('reports ANSIBLE_INVENTORY_INVALID when ansible-inventory cannot read the inventory', async () => {
    // A stand-in ansible-inventory that refuses every file; the real ansible-playbook runs.
    const bin = mkdtempSync(join(tmpdir(), 'fleetkit-ansible-bin-'))
    try {
      writeFileSync(
        join(bin, 'ansible-inventory'),
        '#!/bin/sh\necho "ERROR! inventory refused by the test" >&2\nexit 1\n',
      )
      chmodSync(join(bin, 'ansible-inventory'), 0o755)
      symlinkSync('/usr/bin/ansible-playbook', join(bin, 'ansible-playbook'))
      const result = await checkAnsible({
        definition,
        hostPolicy: loadHostPolicy(),
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
      })
      assert.deepEqual(result.findings, [
        {
          code: 'ANSIBLE_INVENTORY_INVALID',
          check: 'definition:playbooks',
          path: 'inventory.yml',
          message: 'inventory refused by the test',
        },
      ])
    } finally {
      rmSync(bin, { recursive: true, force: true })
    }
  })

  it('validate --ansible --json reports the playbooks it checked (schema/output/validate.schema.json)', async () => {
    const ran = await runFleetkit(['validate', '--definition', 'examples/fleet.yaml', '--ansible', '--json'])
    const json = ran.json as { status: number; result: { ansible: { playbooks: string[]; syntaxCheckRuns: number } } }
    assertMatchesOutputSchema('validate', json)
    assert.equal(json.status, 0)
    assert.equal(json.result.ansible.playbooks.length, 5)
    assert.equal(json.result.ansible.syntaxCheckRuns, 1)
  })

  it('says ANSIBLE_MISSING when ansible is not on PATH', async () => {
    await assert.rejects(
      checkAnsible({ definition, hostPolicy: {}, env: { PATH: '/nonexistent' } }),
      (error: unknown) => {
        assert.ok(error instanceof FleetkitError)
        assert.equal(error.code, 'ANSIBLE_MISSING')
        return true
      },
    )
  })
})
