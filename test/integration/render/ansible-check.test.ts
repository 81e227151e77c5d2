import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { loadHostPolicy } from '../../../src/definition/host-policy.js'
import { loadDefinition } from '../../../src/definition/load.js'
import type { Definition } from '../../../src/definition/types.js'
import { packagePath } from '../../../src/package-root.js'
import { checkAnsible } from '../../../src/render/ansible-check.js'
import { renderInventory } from '../../../src/render/inventory.js'

const run = promisify(execFile)

describe('render: validate --ansible checks (real ansible)', function () {
  this.timeout(120_000)
  let definition: Definition

  before(async () => {
    definition = await loadDefinition(packagePath('examples', 'fleet.yaml'), { allowDocumentationRanges: true })
  })

  it('ansible-inventory --list reads the rendered example inventory with every host and group', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetkit-inv-'))
    try {
      const rendered = renderInventory({ definition, stateNodes: [], hostPolicy: loadHostPolicy(), knownHostsPath: join(dir, 'known_hosts') })
      writeFileSync(join(dir, 'inventory.yml'), rendered.yaml)
      const { stdout } = await run('ansible-inventory', ['-i', join(dir, 'inventory.yml'), '--list'], {
        env: { ...process.env, ANSIBLE_INVENTORY_UNPARSED_FAILED: 'true', ANSIBLE_INVENTORY_ENABLED: 'yaml' },
      })
      const listed = JSON.parse(stdout) as Record<string, { hosts?: string[] }> & { _meta: { hostvars: Record<string, Record<string, unknown>> } }
      assert.deepEqual(Object.keys(listed._meta.hostvars).sort(), rendered.hosts)
      assert.deepEqual(listed.canary?.hosts, ['build-1'])
      assert.deepEqual(listed.pool_build?.hosts, ['build-1', 'build-2', 'build-3'])
      const app2 = listed._meta.hostvars['app-2']!
      assert.equal(app2.ansible_port, 2222)
      assert.match(String(app2.ansible_ssh_common_args), /StrictHostKeyChecking=yes/)
      assert.equal((app2.fleetkit_host_policy as { version: number }).version, 1)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('passes fleetkit\'s own playbooks in one ansible-playbook process', async () => {
    const result = await checkAnsible({ definition, hostPolicy: loadHostPolicy() })
    assert.deepEqual(result.findings, [])
    assert.equal(result.syntaxCheckRuns, 1)
    assert.deepEqual(result.playbooks, ['ansible/playbooks/firewall.yml', 'ansible/playbooks/preflight.yml', 'ansible/playbooks/site.yml', 'ansible/playbooks/update-agent.yml'])
  })

  it('reports exactly the two broken playbooks out of six, each with its code and check ID', async () => {
    const result = await checkAnsible({ definition, hostPolicy: loadHostPolicy(), playbookDir: packagePath('test', 'fixtures', 'ansible', 'two-broken') })
    assert.equal(result.playbooks.length, 6)
    assert.equal(result.findings.length, 2)
    assert.deepEqual(result.findings.map((f) => [f.code, f.check, f.path]).sort(), [
      ['ANSIBLE_PLAYBOOK_INVALID', 'definition:playbooks', 'test/fixtures/ansible/two-broken/broken-keyword.yml'],
      ['ANSIBLE_PLAYBOOK_INVALID', 'definition:playbooks', 'test/fixtures/ansible/two-broken/broken-yaml.yml'],
    ])
    for (const f of result.findings) assert.ok(f.message.length > 0 && !f.message.includes('\n'))
  })

  it('says ANSIBLE_MISSING when ansible is not on PATH', async () => {
    await assert.rejects(checkAnsible({ definition, hostPolicy: {}, env: { PATH: '/nonexistent' } }), (error: unknown) => {
      assert.ok(error instanceof FleetkitError)
      assert.equal(error.code, 'ANSIBLE_MISSING')
      return true
    })
  })
})
