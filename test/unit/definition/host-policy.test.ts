// The host policy as behaviour: the reader returns what a policy file says (tested on policies
// written here, not by restating the shipped file), refuses a broken one, and the shipped file
// holds together (every limit it sets can be met by a host it describes).
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { findServerType, knownRegions, loadHostPolicy } from '../../../src/definition/host-policy.js'

const POLICY = `version: 1
sizing: { minimum: { cpu: 3, memoryMiB: 5000, rootDiskMiB: 30000 } }
reserve: { cpu: 0.25, memoryMiB: 512, diskGiB: 7 }
releases:
  - { id: ubuntu, version: "24.04", codename: noble }
  - { id: debian, version: "12", codename: bookworm }
architectures: [arm64]
regions:
  alpha: [a1, a2]
  beta: [b1]
serverTypes:
  alpha: { small: { cores: 1, memoryMiB: 1024, diskGiB: 10, architecture: arm64 } }
  beta: { big: { cores: 32, memoryMiB: 65536, diskGiB: 600, architecture: arm64 } }
`

describe('the host policy', () => {
  let dir: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-policy-'))
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  const write = async (name: string, text: string) => {
    const path = join(dir, name)
    await writeFile(path, text)
    return path
  }

  it('gives the sizing minimum, the reserve, releases and architectures a policy file states', async () => {
    const policy = loadHostPolicy(await write('policy.yaml', POLICY))
    assert.deepEqual(policy.sizing.minimum, { cpu: 3, memoryMiB: 5000, rootDiskMiB: 30000 })
    assert.deepEqual(policy.reserve, { cpu: 0.25, memoryMiB: 512, diskGiB: 7 })
    assert.deepEqual(
      policy.releases.map((r) => `${r.id} ${r.version}`),
      ['ubuntu 24.04', 'debian 12'],
    )
    assert.deepEqual(policy.architectures, ['arm64'])
  })

  it('finds a server type under any provider and knows every region of the catalog', async () => {
    const policy = loadHostPolicy(await write('lookup.yaml', POLICY))
    assert.equal(findServerType(policy, 'small')?.cores, 1)
    assert.equal(findServerType(policy, 'big')?.diskGiB, 600)
    assert.equal(findServerType(policy, 'medium'), undefined)
    // A name inherited from Object.prototype is not a server type.
    assert.equal(findServerType(policy, 'constructor'), undefined)
    assert.deepEqual(knownRegions(policy)?.sort(), ['a1', 'a2', 'b1'])
  })

  it('checks no region when the policy has no region catalog', async () => {
    const policy = loadHostPolicy(await write('no-regions.yaml', POLICY.replace(/^regions:\n( {2}.*\n)+/m, '')))
    assert.equal(knownRegions(policy), undefined)
  })

  it('refuses a policy without a key the rules need (HOST_POLICY_INVALID)', async () => {
    const broken = await write('broken.yaml', 'version: 1\nsizing: { minimum: { cpu: 2 } }\n')
    assert.throws(
      () => loadHostPolicy(broken),
      (e: { code?: string; message: string }) =>
        e.code === 'HOST_POLICY_INVALID' && /sizing\.minimum\.memoryMiB/.test(e.message),
    )
    const future = await write('future.yaml', POLICY.replace('version: 1', 'version: 2'))
    assert.throws(
      () => loadHostPolicy(future),
      (e: { code?: string; message: string }) => e.code === 'HOST_POLICY_INVALID' && /version: 1/.test(e.message),
    )
    const bad = await write('bad.yaml', 'version: [\n')
    assert.throws(() => loadHostPolicy(bad), { code: 'HOST_POLICY_INVALID' })
    // testOnly is no longer read: a policy that still marks a release so is refused, not widened.
    const testOnly = await write(
      'test-only.yaml',
      POLICY.replace('codename: bookworm }', 'codename: bookworm, testOnly: true }'),
    )
    assert.throws(
      () => loadHostPolicy(testOnly),
      (e: { code?: string; message: string }) => e.code === 'HOST_POLICY_INVALID' && /testOnly/.test(e.message),
    )
  })

  describe('policy/host-policy.yaml as shipped', () => {
    const policy = loadHostPolicy()

    it('accepts Debian 12 and 13 and Ubuntu 24.04 and 26.04, each release named once', () => {
      assert.deepEqual(policy.releases.map((r) => `${r.id} ${r.version}`).sort(), [
        'debian 12',
        'debian 13',
        'ubuntu 24.04',
        'ubuntu 26.04',
      ])
      const names = policy.releases.map((r) => `${r.id} ${r.version}`)
      assert.equal(new Set(names).size, names.length)
    })

    it('describes only server types of an architecture fleetkit ships an agent for', () => {
      const foreign = Object.entries(policy.serverTypes).flatMap(([provider, types]) =>
        Object.entries(types)
          .filter(([, size]) => !policy.architectures.includes(size.architecture))
          .map(([name]) => `${provider}/${name}`),
      )
      assert.deepEqual(foreign, [])
    })

    it('has, for every architecture, a server type that meets the sizing minimum with room left after the reserve', () => {
      const { minimum } = policy.sizing
      for (const architecture of policy.architectures) {
        const fits = Object.values(policy.serverTypes)
          .flatMap((types) => Object.values(types))
          .filter(
            (size) =>
              size.architecture === architecture &&
              size.cores >= minimum.cpu &&
              size.memoryMiB >= minimum.memoryMiB &&
              size.diskGiB * 1024 >= minimum.rootDiskMiB &&
              size.cores > policy.reserve.cpu &&
              size.memoryMiB > policy.reserve.memoryMiB &&
              size.diskGiB > policy.reserve.diskGiB,
          )
        assert.ok(fits.length > 0, `no ${architecture} server type meets the minimum`)
      }
    })
  })
})
