import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { findServerType, loadHostPolicy } from '../../../src/definition/host-policy.js'

describe('policy/host-policy.yaml', () => {
  let dir: string
  before(async () => { dir = await mkdtemp(join(tmpdir(), 'fleetkit-policy-')) })
  after(async () => { await rm(dir, { recursive: true, force: true }) })

  it('holds the sizing minimum, the reserve, releases, architectures and server types', () => {
    const policy = loadHostPolicy()
    assert.deepEqual(policy.sizing.minimum, { cpu: 2, memoryMiB: 3584, rootDiskMiB: 20480 })
    assert.deepEqual(policy.reserve, { cpu: 0.5, memoryMiB: 1024, diskGiB: 20 })
    assert.deepEqual(policy.releases.map((r) => `${r.id} ${r.version}`), ['ubuntu 24.04', 'ubuntu 26.04', 'debian 12'])
    assert.deepEqual(policy.architectures, ['amd64', 'arm64'])
    assert.deepEqual(findServerType(policy, 'cx22'), { cores: 2, memoryMiB: 4096, diskGiB: 40, architecture: 'amd64' })
    assert.equal(findServerType(policy, 'nope'), undefined)
  })

  it('refuses a policy without a key the rules need (HOST_POLICY_INVALID)', async () => {
    const path = join(dir, 'broken.yaml')
    await writeFile(path, 'version: 1\nsizing: { minimum: { cpu: 2 } }\n')
    assert.throws(() => loadHostPolicy(path), (e: { code?: string; message: string }) => e.code === 'HOST_POLICY_INVALID' && /sizing\.minimum\.memoryMiB/.test(e.message))
    const bad = join(dir, 'bad.yaml')
    await writeFile(bad, 'version: [\n')
    assert.throws(() => loadHostPolicy(bad), { code: 'HOST_POLICY_INVALID' })
  })
})
